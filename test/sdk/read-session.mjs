// Reads tack transcripts with the official Claude Agent SDK's session
// helpers and prints what they return as one JSON object, for the
// internal/session interop test.
//
//   node read-session.mjs <dir> [session id...]
//
// <dir> is the project's working directory; the helpers find its
// transcripts under $CLAUDE_CONFIG_DIR/projects/<slug of dir>. Output:
//   {"sessions": listSessions({dir}),
//    "byId": {"<id>": {"info": getSessionInfo(id, {dir}) ?? null,
//                      "messages": getSessionMessages(id, {dir}),
//                      "withSystem": getSessionMessages(id, {dir, includeSystemMessages: true})}}}
import { listSessions, getSessionInfo, getSessionMessages } from "@anthropic-ai/claude-agent-sdk";

const [dir, ...ids] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node read-session.mjs <dir> [session id...]");
  process.exit(2);
}
const out = { sessions: await listSessions({ dir }), byId: {} };
for (const id of ids) {
  out.byId[id] = {
    info: (await getSessionInfo(id, { dir })) ?? null,
    messages: await getSessionMessages(id, { dir }),
    withSystem: await getSessionMessages(id, { dir, includeSystemMessages: true }),
  };
}
process.stdout.write(JSON.stringify(out) + "\n");
