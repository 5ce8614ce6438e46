// Each error category renders its affordance; a retry button appears only for
// retryable errors and waits out retry_after_ms.
import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ApiError } from "../src/api/errors";
import type { ErrorBody, ErrorCategory, ErrorCode } from "../src/api/types";
import { ErrorPanel } from "../src/ui/ErrorPanel";
import { errorView } from "../src/ui/affordance";

const CASES: [ErrorCategory, ErrorCode, number, boolean, string][] = [
  ["validation", "invalid_input", 400, false, "fix_input"],
  ["unauthorized", "unauthorized", 401, false, "sign_in"],
  ["permission", "read_only", 403, false, "not_allowed"],
  ["module_disabled", "module_disabled", 403, false, "enable_module"],
  ["not_found", "task_not_found", 404, false, "go_back"],
  ["conflict", "version_conflict", 409, false, "resolve_conflict"],
  ["too_large", "content_too_large", 413, false, "shrink"],
  ["rate_limited", "rate_limited", 429, true, "retry"],
  ["internal", "internal_error", 500, false, "report"],
  ["transient", "store_busy", 503, true, "retry"],
  ["unavailable", "store_unavailable", 503, true, "retry"],
  ["not_found", "project_not_found", 404, false, "go_back"],
  ["permission", "project_archived", 403, false, "not_allowed"],
  ["conflict", "project_exists", 409, false, "resolve_conflict"],
  ["conflict", "dependency_cycle", 409, false, "resolve_conflict"],
];

function apiError(category: ErrorCategory, code: ErrorCode, status: number, retryable: boolean, over: Partial<ErrorBody> = {}): ApiError {
  return {
    status,
    body: {
      category,
      code,
      message: `message for ${code}`,
      retryable,
      request_id: `req-${code}`,
      details: {},
      suggestions: [],
      ...over,
    },
  };
}

let root: HTMLElement;
beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => {
  render(null, root);
  root.remove();
  vi.useRealTimers();
});

const q = (sel: string) => root.querySelector<HTMLElement>(sel);

describe("ErrorPanel per category", () => {
  it.each(CASES)("%s (%s) shows message, code, request id and its affordance", (category, code, status, retryable, affordance) => {
    const onRetry = vi.fn();
    act(() => render(<ErrorPanel error={apiError(category, code, status, retryable)} onRetry={onRetry} />, root));
    const panel = q('[data-testid="error-panel"]');
    expect(panel?.dataset.category).toBe(category);
    expect(panel?.dataset.affordance).toBe(affordance);
    expect(panel?.textContent).toContain(`message for ${code}`);
    expect(q('[data-testid="error-code"]')?.textContent).toBe(code);
    expect(q('[data-testid="request-id"]')?.textContent).toBe(`req-${code}`);
    expect(q('[data-testid="copy-request-id"]')).not.toBeNull();
    expect(q('[data-testid="retry"]') !== null).toBe(retryable);
    expect(panel?.getAttribute("role")).toBe("alert");
  });

  it("unauthorized asks for the access token and retries with it", () => {
    const onRetry = vi.fn();
    act(() => render(<ErrorPanel error={apiError("unauthorized", "unauthorized", 401, false)} onRetry={onRetry} />, root));
    const input = q('[data-testid="token-input"]') as HTMLInputElement;
    expect(input).not.toBeNull();
    act(() => {
      input.value = "s3cret";
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
    act(() => (q("form.token-form") as HTMLFormElement).requestSubmit());
    expect(localStorage.getItem("cairn.token")).toBe("s3cret");
    expect(onRetry).toHaveBeenCalledOnce();
  });

  it("not_found offers a way back to the board", () => {
    act(() => render(<ErrorPanel error={apiError("not_found", "note_not_found", 404, false)} />, root));
    expect(q('a[href="#/board"]')).not.toBeNull();
  });

  it("validation shows the field and the server's suggestions", () => {
    const e = apiError("validation", "unknown_field", 400, false, { details: { field: "titel" }, suggestions: ["title"] });
    act(() => render(<ErrorPanel error={e} />, root));
    expect(root.textContent).toContain('Field "titel"');
    expect(root.textContent).toContain("title");
  });

  it("a retryable error without an onRetry handler shows no retry button", () => {
    act(() => render(<ErrorPanel error={apiError("transient", "store_busy", 503, true)} />, root));
    expect(q('[data-testid="retry"]')).toBeNull();
  });

  it("a non-retryable error never shows retry, even with a handler", () => {
    act(() => render(<ErrorPanel error={apiError("internal", "internal_error", 500, false)} onRetry={() => {}} />, root));
    expect(q('[data-testid="retry"]')).toBeNull();
  });
});

describe("retry", () => {
  it("waits out retry_after_ms before it can be pressed", () => {
    vi.useFakeTimers();
    const onRetry = vi.fn();
    const e = apiError("transient", "store_busy", 503, true, { retry_after_ms: 2000 });
    act(() => render(<ErrorPanel error={e} onRetry={onRetry} />, root));
    const button = q('[data-testid="retry"]') as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    expect(button.textContent).toContain("Retry in 2 s");
    act(() => void vi.advanceTimersByTime(2200));
    expect(button.disabled).toBe(false);
    act(() => button.click());
    expect(onRetry).toHaveBeenCalledOnce();
  });

  it("is enabled at once without retry_after_ms", () => {
    const onRetry = vi.fn();
    act(() => render(<ErrorPanel error={apiError("unavailable", "store_unavailable", 503, true)} onRetry={onRetry} />, root));
    const button = q('[data-testid="retry"]') as HTMLButtonElement;
    expect(button.disabled).toBe(false);
    act(() => button.click());
    expect(onRetry).toHaveBeenCalledOnce();
  });
});

describe("copy request id", () => {
  it("writes the request id to the clipboard", async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    act(() => render(<ErrorPanel error={apiError("internal", "internal_error", 500, false)} />, root));
    await act(async () => q('[data-testid="copy-request-id"]')?.click());
    expect(writeText).toHaveBeenCalledWith("req-internal_error");
    await vi.waitFor(() => expect(q('[data-testid="copy-request-id"]')?.textContent).toBe("Copied"));
  });
});

describe("errorView", () => {
  it("a client-made internal error from an empty body reports, never retries", () => {
    const v = errorView(apiError("internal", "internal_error", 500, false).body);
    expect(v.affordance).toBe("report");
    expect(v.retry).toBe(false);
  });
});

describe("permission_denied", () => {
  it("names the token, what it may do and the scope needed", () => {
    const view = errorView(
      apiError("permission", "permission_denied", 403, false, {
        details: { token: "reader", scope: "read", required_scope: "write" },
      }).body,
    );
    expect(view.affordance).toBe("not_allowed");
    expect(view.hint).toBe('The token "reader" may only read; this needs a "write" token.');
  });
});

describe("idempotency refusals", () => {
  it("says a reused key named another request, and offers no retry", () => {
    const view = errorView(
      apiError("validation", "idempotency_key_reused", 422, false, { details: {} }).body,
    );
    expect(view.affordance).toBe("fix_input");
    expect(view.retry).toBe(false);
    expect(view.hint).toMatch(/already used for a different request/);
  });

  it("offers a retry while the first request with the key runs", () => {
    const view = errorView(
      apiError("transient", "idempotency_request_in_progress", 409, true, {
        retry_after_ms: 250,
        details: {},
      }).body,
    );
    expect(view.affordance).toBe("retry");
    expect(view.retry).toBe(true);
    expect(view.retryAfterMs).toBe(250);
    expect(view.hint).toMatch(/still running/);
  });
});

describe("project errors", () => {
  const project = { details: { project: "web" } };

  it("project_not_found leads back to the default project, which always exists", () => {
    location.hash = "#/p/web/board";
    try {
      act(() => render(<ErrorPanel error={apiError("not_found", "project_not_found", 404, false, project)} />, root));
      expect(q('a[href="#/board"]')?.textContent).toBe("Back to the default project");
      expect(root.textContent).toContain("Pick another project");
    } finally {
      location.hash = "";
    }
  });

  it("another not_found inside a project goes back to that project's board", () => {
    location.hash = "#/p/web/tasks/abcdef";
    try {
      act(() => render(<ErrorPanel error={apiError("not_found", "task_not_found", 404, false)} />, root));
      expect(q('a[href="#/p/web/board"]')?.textContent).toBe("Back to the board");
    } finally {
      location.hash = "";
    }
  });

  it("project_archived says the project reads but refuses changes, with no retry", () => {
    const view = errorView(apiError("permission", "project_archived", 403, false, project).body);
    expect(view.affordance).toBe("not_allowed");
    expect(view.retry).toBe(false);
    expect(view.hint).toMatch(/until it is unarchived/);
  });

  it("dependency_cycle shows the tasks on the cycle, in order", () => {
    const cycle = { details: { cycle: ["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"] } };
    const view = errorView(apiError("conflict", "dependency_cycle", 409, false, cycle).body);
    expect(view.retry).toBe(false);
    expect(view.hint).toMatch(/aaaaaaaa → bbbbbbbb → cccccccc/);
  });

  it("project_exists names the key that is taken", () => {
    const view = errorView(apiError("conflict", "project_exists", 409, false, project).body);
    expect(view.hint).toBe('Pick another key, or switch to "web" in the header.');
  });
});
