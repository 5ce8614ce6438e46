// What the UI offers for an error, decided by its category (and a few codes).
// Pure, so the rules are unit-tested apart from rendering.
import type { ErrorBody, ErrorCategory } from "../api/types";

export type Affordance =
  | "fix_input" // validation: change the request
  | "sign_in" // unauthorized
  | "not_allowed" // permission / read-only store
  | "enable_module" // module_disabled
  | "go_back" // not_found
  | "resolve_conflict" // conflict: the view shows what to do
  | "shrink" // too_large
  | "retry" // rate_limited / transient / unavailable (and any retryable error)
  | "report"; // internal: a bug, quote the request id

export interface ErrorView {
  affordance: Affordance;
  title: string;
  hint: string | null;
  /** Offer a retry button (only when the server says the same call may succeed). */
  retry: boolean;
  /** Wait this long before the retry button is enabled. */
  retryAfterMs: number;
}

const BY_CATEGORY: Record<ErrorCategory, { affordance: Affordance; title: string }> = {
  validation: { affordance: "fix_input", title: "The request was not accepted" },
  unauthorized: { affordance: "sign_in", title: "Not signed in" },
  permission: { affordance: "not_allowed", title: "Not allowed" },
  module_disabled: { affordance: "enable_module", title: "This feature is switched off" },
  not_found: { affordance: "go_back", title: "Not found" },
  conflict: { affordance: "resolve_conflict", title: "Conflict" },
  too_large: { affordance: "shrink", title: "Too large" },
  rate_limited: { affordance: "retry", title: "Too many requests" },
  internal: { affordance: "report", title: "Something went wrong" },
  transient: { affordance: "retry", title: "The server is busy" },
  unavailable: { affordance: "retry", title: "Temporarily unavailable" },
};

function str(v: unknown): string | null {
  return typeof v === "string" || typeof v === "number" ? String(v) : null;
}

function hintFor(e: ErrorBody): string | null {
  const d = e.details;
  switch (e.code) {
    case "read_only":
      return "The store is read-only; changes cannot be saved right now.";
    case "permission_denied":
      return str(d.required_scope)
        ? `The token "${str(d.token) ?? "?"}" may ${str(d.scope) === "read" ? "only read" : "not do this"}; this needs a "${str(d.required_scope)}" token.`
        : null;
    case "module_disabled":
      return str(d.module) ? `Module "${str(d.module)}" is disabled on this server.` : null;
    case "version_conflict":
    case "precondition_failed":
      return str(d.current_version) ? `It is now at version ${str(d.current_version)}.` : null;
    case "claim_held":
      return str(d.holder)
        ? `Held by ${str(d.holder)}${str(d.expires_at) ? ` until ${new Date(String(d.expires_at)).toLocaleString()}` : ""}.`
        : null;
    case "claim_not_held":
      return str(d.holder) ? `The claim is held by ${str(d.holder)}, not by you.` : "Nobody holds this claim.";
    case "invalid_transition":
      return str(d.status) ? `The task is ${str(d.status)}.` : null;
    case "content_too_large":
    case "payload_too_large":
      return str(d.limit_bytes) ? `The limit is ${str(d.limit_bytes)} bytes.` : null;
    case "idempotency_key_reused":
      return "This retry key was already used for a different request; send it again with a new key.";
    case "idempotency_request_in_progress":
      return "The first request with this retry key is still running; retry to get its answer.";
    // The server's messages name the project and say what happened; the hints say what to do here.
    case "project_not_found":
      return "Pick another project in the header.";
    case "project_archived":
      return "Nothing in an archived project can be changed until it is unarchived.";
    case "project_exists":
      return `Pick another key, or switch to "${str(d.project) ?? "that project"}" in the header.`;
    case "dependency_cycle":
      return Array.isArray(d.cycle)
        ? `These tasks would each wait for the next, and the last for the first: ${d.cycle.map((id) => String(id).slice(0, 8)).join(" → ")}. Remove one of those links, or link the other way.`
        : null;
    case "id_prefix_too_short":
      return `Use at least ${str(d.min_length) ?? "6"} characters of the id.`;
    default:
      break;
  }
  if (e.category === "validation" && str(d.field)) {
    return `Field "${str(d.field)}"${str(d.reason) ? `: ${str(d.reason)}` : ""}.`;
  }
  if (e.category === "internal") return "This is a bug. Quote the request id when you report it.";
  return null;
}

export function errorView(e: ErrorBody): ErrorView {
  const base = BY_CATEGORY[e.category] ?? BY_CATEGORY.internal;
  return {
    affordance: e.retryable ? "retry" : base.affordance,
    title: base.title,
    hint: hintFor(e),
    retry: e.retryable === true,
    retryAfterMs: e.retryable ? Math.max(0, e.retry_after_ms ?? 0) : 0,
  };
}
