# The step summary (GitHub-flavoured Markdown) of one tack run, from its
# execution log: the array of every stream-json message tack printed.
# run.sh passes $conclusion (success or failure) and $status (tack's exit
# status).

def cell: tostring | gsub("\\|"; "\\|") | gsub("\n"; " ");
def dollars: "$" + ((. * 10000 | round) / 10000 | tostring);
def seconds: ((. / 100 | round) / 10 | tostring) + " s";

(map(select(.type == "system" and .subtype == "init")) | first // {}) as $init
| (map(select(.type == "result")) | last // null) as $r
| [.[] | select(.type == "assistant") | .message.content[]? | select(.type == "tool_use")] as $uses
| [.[] | select(.type == "user") | .message.content[]? | select(.type == "tool_result" and .is_error == true) | .tool_use_id] as $failed
| [
    "## tack \(if $conclusion == "success" then "✅" else "❌" end) \($r.subtype // "no result")",
    "",
    "Session `\($init.session_id // $r.session_id // "none")`, model `\($init.model // "unknown")`.",
    "",
    "| turns | cost | duration | tool calls | denied |",
    "|---:|---:|---:|---:|---:|",
    "| \($r.num_turns // 0) | \($r.total_cost_usd // 0 | dollars) | \($r.duration_ms // 0 | seconds) | \($uses | length) | \($r.permission_denials // [] | length) |",
    ""
  ]
  + if ($uses | length) == 0 then [] else
      [ "| tool | calls | failed |", "|---|---:|---:|" ]
      + ($uses | group_by(.name) | map(
          "| \(.[0].name | cell) | \(length) | \(map(select(.id as $id | $failed | index($id))) | length) |"))
      + [""]
    end
  + if $r == null then
      [ "tack printed no result (exit status \($status))." ]
    elif ($r.result // "") != "" then
      [ "### Result", "", $r.result ]
    else
      [ "### Errors", "" ] + (($r.errors // ["none reported"]) | map("- " + (. | cell)))
    end
  + [""]
| join("\n")
