// The footer line: the server's health report, polled every 15 seconds.
import { useEffect } from "preact/hooks";
import { health } from "../api/calls";
import { useLoad } from "../lib/load";
import { TOKEN_CHANGED } from "../lib/token";

export function StatusLine() {
  const h = useLoad(() => health(), []);
  useEffect(() => {
    const timer = setInterval(h.reload, 15000);
    addEventListener(TOKEN_CHANGED, h.reload);
    return () => {
      clearInterval(timer);
      removeEventListener(TOKEN_CHANGED, h.reload);
    };
  }, [h.reload]);
  const status = h.error ? (h.error.status === 0 ? "unreachable" : "error") : (h.data?.status ?? "checking");
  return (
    <footer class={`status-line status-${status}`} role="status" aria-live="polite" data-testid="status-line">
      <span class="dot" aria-hidden="true" />
      server: <strong data-testid="server-status">{status}</strong>
      {h.error ? <span class="muted"> — {h.error.body.message}</span> : null}
    </footer>
  );
}
