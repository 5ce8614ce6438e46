# Temporary: an OpenAPI document written from CONTRACT.md so the SPA can be built
# before the gateway's real openapi/openapi.json lands. Deleted once it does.
import json
codes = json.load(open("../../tests/fixtures/error-codes.json"))
R = lambda n: {"$ref": f"#/components/schemas/{n}"}
S = {}
S["ErrorCategory"] = {"type": "string", "enum": list(codes["categories"].keys())}
S["ErrorCode"] = {"type": "string", "enum": list(codes["codes"].keys())}
S["ErrorBody"] = {"type": "object", "required": ["category","code","message","retryable","request_id","details","suggestions"], "properties": {
  "category": R("ErrorCategory"), "code": R("ErrorCode"), "message": {"type":"string"}, "retryable": {"type":"boolean"},
  "retry_after_ms": {"type":["integer","null"], "minimum":0}, "request_id": {"type":"string"}, "details": {"type":"object"},
  "suggestions": {"type":"array","items":{"type":"string"}}}}
S["ErrorEnvelope"] = {"type":"object","required":["error"],"properties":{"error":R("ErrorBody")}}
S["Trim"] = {"type":"object","required":["path","kind","from","to"],"properties":{"path":{"type":"string"},"kind":{"type":"string"},"from":{"type":"integer"},"to":{"type":"integer"}}}
S["Meta"] = {"type":"object","required":["api_version","tool","layer","request_id","runtime_ms","warnings","tokens_estimated","truncated","trimmed"],"properties":{
  "api_version":{"type":"string"},"tool":{"type":"string"},"layer":{"type":"string"},"request_id":{"type":"string"},"runtime_ms":{"type":"number"},
  "warnings":{"type":"array","items":{"type":"string"}},"tokens_estimated":{"type":"integer"},"truncated":{"type":"boolean"},"trimmed":{"type":"array","items":R("Trim")}}}
S["TaskStatus"] = {"type":"string","enum":["open","claimed","done","cancelled"]}
S["Claim"] = {"type":"object","required":["agent","expires_at"],"properties":{"agent":{"type":"string"},"claimed_at":{"type":"string"},"expires_at":{"type":"string"}}}
S["Task"] = {"type":"object","required":["id","title","description","status","tags","priority","version","created_at","updated_at"],"properties":{
  "id":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"status":R("TaskStatus"),"tags":{"type":"array","items":{"type":"string"}},
  "priority":{"type":"integer"},"version":{"type":"integer"},"created_at":{"type":"string"},"updated_at":{"type":"string"},
  "claim":{"oneOf":[{"type":"null"},R("Claim")]}}}
S["TaskPage"] = {"type":"object","required":["items","next_cursor","total"],"properties":{"items":{"type":"array","items":R("Task")},"next_cursor":{"type":["string","null"]},"total":{"type":"integer"}}}
S["BoardColumn"] = {"type":"object","required":["status","items","next_cursor","total"],"properties":{"status":R("TaskStatus"),"items":{"type":"array","items":R("Task")},"next_cursor":{"type":["string","null"]},"total":{"type":"integer"}}}
S["Board"] = {"type":"object","required":["columns"],"properties":{"columns":{"type":"array","items":R("BoardColumn")}}}
S["NewTask"] = {"type":"object","required":["title"],"properties":{"title":{"type":"string"},"description":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"priority":{"type":"integer"}}}
S["TaskPatch"] = {"type":"object","properties":{"expected_version":{"type":"integer"},"title":{"type":"string"},"description":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"priority":{"type":"integer"}}}
S["ClaimRequest"] = {"type":"object","required":["agent"],"properties":{"agent":{"type":"string"},"ttl_minutes":{"type":"integer"}}}
S["AgentRequest"] = {"type":"object","required":["agent"],"properties":{"agent":{"type":"string"}}}
S["OptionalAgent"] = {"type":"object","properties":{"agent":{"type":"string"}}}
S["Note"] = {"type":"object","required":["id","title","slug","content","tags","version","created_at","updated_at"],"properties":{
  "id":{"type":"string"},"title":{"type":"string"},"slug":{"type":"string"},"content":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},
  "source_url":{"type":["string","null"]},"version":{"type":"integer"},"created_at":{"type":"string"},"updated_at":{"type":"string"}}}
S["NotePage"] = {"type":"object","required":["items","next_cursor","total"],"properties":{"items":{"type":"array","items":R("Note")},"next_cursor":{"type":["string","null"]},"total":{"type":"integer"}}}
S["NoteInput"] = {"type":"object","required":["title","content"],"properties":{"title":{"type":"string"},"content":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"source_url":{"type":"string"},"expected_version":{"type":"integer"}}}
S["Deleted"] = {"type":"object","required":["id","deleted"],"properties":{"id":{"type":"string"},"deleted":{"type":"boolean"}}}
S["NewLink"] = {"type":"object","required":["source","target"],"properties":{"source":{"type":"string"},"target":{"type":"string"},"kind":{"type":"string"}}}
S["GraphNode"] = {"type":"object","required":["id","kind","title"],"properties":{"id":{"type":"string"},"kind":{"type":"string","enum":["task","note"]},"title":{"type":"string"}}}
S["GraphEdge"] = {"type":"object","required":["id","source","target","kind"],"properties":{"id":{"type":"string"},"source":{"type":"string"},"target":{"type":"string"},"kind":{"type":"string"}}}
S["Graph"] = {"type":"object","required":["nodes","edges"],"properties":{"nodes":{"type":"array","items":R("GraphNode")},"edges":{"type":"array","items":R("GraphEdge")}}}
S["SearchHit"] = {"type":"object","required":["id","kind","title","snippet"],"properties":{"id":{"type":"string"},"kind":{"type":"string"},"title":{"type":"string"},"snippet":{"type":"string"},"score":{"type":"number"}}}
S["SearchPage"] = {"type":"object","required":["items","next_cursor","total"],"properties":{"items":{"type":"array","items":R("SearchHit")},"next_cursor":{"type":["string","null"]},"total":{"type":"integer"}}}
S["Health"] = {"type":"object","required":["status"],"properties":{"status":{"type":"string","enum":["ok","degraded","unavailable"]},"checks":{"type":"object"}}}
S["DoctorReport"] = {"type":"object"}
def env(name):
    n = name + "Envelope"
    S[n] = {"type":"object","required":["data","meta"],"properties":{"data":R(name),"meta":R("Meta")}}
    return n
def ok(name, status="200"):
    return {status: {"description":"ok","content":{"application/json":{"schema":R(env(name))}}}}
ERR = {s: {"description":"error","content":{"application/json":{"schema":R("ErrorEnvelope")}}} for s in ["400","404","409","413","500","503"]}
def op(opid, resp, body=None, params=()):
    o = {"operationId":opid,"responses":{**resp, **ERR}}
    if body: o["requestBody"]={"required":True,"content":{"application/json":{"schema":R(body)}}}
    if params: o["parameters"]=list(params)
    return o
def q(n, t="string"): return {"name":n,"in":"query","required":False,"schema":{"type":t}}
def p(n): return {"name":n,"in":"path","required":True,"schema":{"type":"string"}}
ID = p("id")
paths = {
 "/api/v1/tasks": {"get": op("task_list", ok("TaskPage"), params=[q("status"),q("tag"),q("claimant"),q("q"),q("limit","integer"),q("cursor")]),
                   "post": op("task_create", ok("Task","201"), "NewTask")},
 "/api/v1/tasks/{id}": {"get": op("task_get", ok("Task"), params=[ID]), "patch": op("task_update", ok("Task"), "TaskPatch", [ID])},
 "/api/v1/tasks/{id}/claim": {"post": op("task_claim", ok("Task"), "ClaimRequest", [ID])},
 "/api/v1/tasks/{id}/renew": {"post": op("task_renew", ok("Task"), "AgentRequest", [ID])},
 "/api/v1/tasks/{id}/release": {"post": op("task_release", ok("Task"), "AgentRequest", [ID])},
 "/api/v1/tasks/{id}/complete": {"post": op("task_complete", ok("Task"), "OptionalAgent", [ID])},
 "/api/v1/tasks/{id}/cancel": {"post": op("task_cancel", ok("Task"), "OptionalAgent", [ID])},
 "/api/v1/tasks/{id}/reopen": {"post": op("task_reopen", ok("Task"), "OptionalAgent", [ID])},
 "/api/v1/board": {"get": op("task_board", ok("Board"), params=[q("limit","integer")])},
 "/api/v1/notes": {"get": op("note_list", ok("NotePage"), params=[q("tag"),q("q"),q("limit","integer"),q("cursor")]), "post": op("note_create", ok("Note","201"), "NoteInput")},
 "/api/v1/notes/{id}": {"get": op("note_get", ok("Note"), params=[ID]), "put": op("note_update", ok("Note"), "NoteInput", [ID]), "delete": op("note_delete", ok("Deleted"), params=[ID])},
 "/api/v1/links": {"post": op("link_create", ok("GraphEdge","201"), "NewLink")},
 "/api/v1/links/{id}": {"delete": op("link_delete", ok("Deleted"), params=[ID])},
 "/api/v1/graph/neighbours/{id}": {"get": op("graph_neighbours", ok("Graph"), params=[ID, q("depth","integer")])},
 "/api/v1/graph/path": {"get": op("graph_path", ok("Graph"), params=[q("from"),q("to")])},
 "/api/v1/graph/export": {"get": op("graph_export", ok("Graph"), params=[q("around"),q("depth","integer")])},
 "/api/v1/graph/doctor": {"post": op("graph_doctor", ok("DoctorReport"))},
 "/api/v1/search": {"get": op("search", ok("SearchPage"), params=[q("q"),q("limit","integer"),q("cursor")])},
 "/api/v1/health": {"get": op("health", ok("Health"))},
}
doc = {"openapi":"3.1.0","info":{"title":"cairn (bootstrap)","version":"0.1.0"},"paths":paths,"components":{"schemas":S}}
json.dump(doc, open("bootstrap-openapi.json","w"), indent=2)
