// The footer line: the server's health report, polled every 15 seconds.
import { useEffect } from "preact/hooks";
import { health } from "../api/calls";
import { useLoad } from "../lib/load";

export function StatusLine() {
  const h = useLoad(() => health(), []);
  useEffect(() => {
    const timer = setInterval(h.reload, 15000);
    return () => clearInterval(timer);
  }, [h.reload]);
  const status = h.error ? "unreachable" : (h.data?.status ?? "checking");
  return (
    <footer class={`status-line status-${status}`} role="status" aria-live="polite" data-testid="status-line">
      <span class="dot" aria-hidden="true" />
      server: <strong>{status}</strong>
      {h.error ? <span class="muted"> — {h.error.body.message}</span> : null}
    </footer>
  );
}
