// Compile-time test (run by `tsc --noEmit`): error codes and categories from
// the generated client are literal unions. Branching on a real code compiles;
// each `@ts-expect-error` line must fail to compile, or tsc reports an unused
// directive and the type check fails.
import { api } from "../src/api/client";
import type { ErrorBody, ErrorCategory, ErrorCode } from "../src/api/types";

export async function branchOnRawClientError(): Promise<string> {
  // The error straight from openapi-fetch is the generated ErrorEnvelope.
  const { error } = await api.PATCH("/api/v1/tasks/{id}", {
    params: { path: { id: "abcdef" } },
    body: { expected_version: 1, title: "t" },
  });
  if (!error) return "ok";
  if (error.error.code === "version_conflict") return "reload";
  // @ts-expect-error: misspelled code is not in the ErrorCode union
  if (error.error.code === "version_conflcit") return "never";
  // @ts-expect-error: categories are a union too
  if (error.error.category === "conflicts") return "never";
  switch (error.error.code) {
    case "claim_held":
    case "store_busy":
      return "retry later";
    // @ts-expect-error: a code that does not exist cannot be a case
    case "task_notfound":
      return "never";
    default:
      return error.error.message;
  }
}

export function exhaustiveOverCategories(category: ErrorCategory): boolean {
  switch (category) {
    case "validation":
    case "unauthorized":
    case "permission":
    case "module_disabled":
    case "not_found":
    case "conflict":
    case "too_large":
    case "internal":
      return false;
    case "rate_limited":
    case "transient":
    case "unavailable":
      return true;
    default: {
      // Fails to compile if the document gains a category this switch ignores.
      const unhandled: never = category;
      return unhandled;
    }
  }
}

export const known: ErrorCode = "slug_collision";
// The project codes, each of which the SPA shows (see ui/affordance.ts).
export const projectCodes: ErrorCode[] = ["project_not_found", "project_archived", "project_exists"];
// A link that would close a cycle of waits (see ui/affordance.ts).
export const planningCodes: ErrorCode[] = ["dependency_cycle"];
// @ts-expect-error: not a code either
export const notAProjectCode: ErrorCode = "project_missing";
// @ts-expect-error: not a code
export const unknown: ErrorCode = "slug_colision";

export function bodyFields(e: ErrorBody): [string, boolean, number | null | undefined] {
  // @ts-expect-error: ErrorBody has no `msg` field
  void e.msg;
  return [e.request_id, e.retryable, e.retry_after_ms];
}
