// The footer line: the server's health report, polled every 15 seconds and
// re-read when the live feed's state changes, and the live feed's state.
import { useEffect } from "preact/hooks";
import { health } from "../api/calls";
import type { LiveState } from "../lib/live";
import { useLoad } from "../lib/load";
import { TOKEN_CHANGED } from "../lib/token";
import { useLiveState } from "../lib/useLive";

const LIVE_TEXT: Record<LiveState, string> = {
  connecting: "connecting",
  live: "live",
  reconnecting: "reconnecting",
  off: "off",
};

export function StatusLine() {
  const h = useLoad(() => health(), []);
  const live = useLiveState();
  // The server's health is news when the feed drops or comes back.
  useEffect(() => {
    if (live !== "connecting") h.reload();
  }, [live]);
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
      <span
        class={`live live-${live}`}
        data-testid="live-status"
        data-state={live}
        title={live === "off" ? "Live updates need a server without --token; reload to see changes." : undefined}
      >
        <span class="dot" aria-hidden="true" />
        updates: <strong>{LIVE_TEXT[live]}</strong>
      </span>
    </footer>
  );
}
