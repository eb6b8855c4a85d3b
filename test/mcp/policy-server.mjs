// A small MCP server on the official TypeScript SDK, for tack's end-to-end
// tests of mcp_tool hooks: its tool "check_command" judges a shell command
// and answers with a hook's decision JSON, as a policy service would. A
// command that deletes with rm -rf is denied, the command quoted in the
// reason (which shows the hook's ${...} input reached it); any other is
// let through without a decision.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "policy", version: "1.0.0" });
server.registerTool(
  "check_command",
  { description: "Judges a shell command for a PreToolUse hook.", inputSchema: { command: z.string(), session: z.string() } },
  async ({ command, session }) => {
    if (!/\brm\s+-rf\b/.test(command)) {
      return { content: [{ type: "text", text: "{}" }] };
    }
    const decision = {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: `the policy server refuses "${command}" (session ${session}): it deletes files`,
      },
    };
    return { content: [{ type: "text", text: JSON.stringify(decision) }] };
  },
);
await server.connect(new StdioServerTransport());
