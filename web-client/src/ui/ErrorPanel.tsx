// Shows one ApiError: message, code, request id (copyable) and the affordance
// its category calls for. A retry button appears only for retryable errors,
// and waits out `retry_after_ms` first.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { ApiError } from "../api/errors";
import { DEFAULT_PROJECT, href, hrefsIn } from "../lib/router";
import { readToken, writeToken } from "../lib/token";
import { errorView } from "./affordance";

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

function useCountdown(ms: number, key: unknown): number {
  const [left, setLeft] = useState(ms);
  useEffect(() => {
    setLeft(ms);
    if (ms <= 0) return;
    const until = Date.now() + ms;
    const timer = setInterval(() => {
      const rest = Math.max(0, until - Date.now());
      setLeft(rest);
      if (rest === 0) clearInterval(timer);
    }, 200);
    return () => clearInterval(timer);
  }, [ms, key]);
  return left;
}

/** For `unauthorized`: the server wants the bearer token it was started with. */
function TokenForm(props: { onSaved: () => void }) {
  const [token, setToken] = useState(readToken);
  return (
    <form
      class="row token-form"
      onSubmit={(e) => {
        e.preventDefault();
        writeToken(token.trim());
        props.onSaved();
      }}
    >
      <label class="grow">
        <span>Access token (the server's CAIRN_TOKEN)</span>
        <input
          type="password"
          autocomplete="off"
          data-testid="token-input"
          value={token}
          onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="submit">Use token</button>
    </form>
  );
}

/** Back to the board; when the project itself is missing, to the default project's, which always exists. */
function BackLink(props: { code: string }) {
  return props.code === "project_not_found" ? (
    <a href={hrefsIn(DEFAULT_PROJECT).board()}>Back to the default project</a>
  ) : (
    <a href={href.board()}>Back to the board</a>
  );
}

export function ErrorPanel(props: {
  error: ApiError;
  onRetry?: (() => void) | undefined;
  onDismiss?: (() => void) | undefined;
  children?: ComponentChildren;
}) {
  const { error, onRetry, onDismiss, children } = props;
  const e = error.body;
  const view = errorView(e);
  const left = useCountdown(view.retryAfterMs, error);
  const [copied, setCopied] = useState<"idle" | "copied" | "failed">("idle");
  const suggestions = Array.isArray(e.suggestions) ? e.suggestions : [];

  return (
    <div
      class={`error-panel error-${e.category}`}
      role="alert"
      data-testid="error-panel"
      data-category={e.category}
      data-code={e.code}
      data-affordance={view.affordance}
    >
      <p class="error-title">
        <strong>{view.title}</strong>
        {error.status > 0 ? <span class="muted"> (HTTP {error.status})</span> : null}
      </p>
      <p class="error-message">{e.message}</p>
      {view.hint ? <p class="error-hint">{view.hint}</p> : null}
      {suggestions.length > 0 ? (
        <p class="error-suggestions">
          Did you mean: {suggestions.map((s, i) => <code key={i}>{s}</code>)}
        </p>
      ) : null}
      {view.affordance === "sign_in" ? <TokenForm onSaved={onRetry ?? (() => location.reload())} /> : null}
      {children}
      <div class="error-meta">
        <span>
          code <code data-testid="error-code">{e.code}</code>
        </span>
        <span>
          request <code data-testid="request-id">{e.request_id}</code>
        </span>
        <button
          type="button"
          class="small"
          data-testid="copy-request-id"
          onClick={() => void copyText(e.request_id).then((ok) => setCopied(ok ? "copied" : "failed"))}
        >
          {copied === "copied" ? "Copied" : copied === "failed" ? "Copy failed" : "Copy request id"}
        </button>
      </div>
      <div class="error-actions">
        {view.retry && onRetry ? (
          <button type="button" data-testid="retry" disabled={left > 0} onClick={onRetry}>
            {left > 0 ? `Retry in ${Math.ceil(left / 1000)} s` : "Retry"}
          </button>
        ) : null}
        {view.affordance === "go_back" ? <BackLink code={e.code} /> : null}
        {onDismiss ? (
          <button type="button" class="secondary" onClick={onDismiss}>
            Dismiss
          </button>
        ) : null}
      </div>
    </div>
  );
}
