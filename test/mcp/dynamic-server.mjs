// A small MCP server on the official TypeScript SDK, for tack's end-to-end
// tests of a tool list that changes mid-session: calling "unlock" adds the
// tool "secret", which makes the SDK send notifications/tools/list_changed.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "dynamic", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
let unlocked = false;
server.registerTool("unlock", { description: "Adds the tool named secret." }, async () => {
  if (!unlocked) {
    unlocked = true;
    server.registerTool("secret", { description: "Tells the secret. Appears after unlock." }, async () => ({
      content: [{ type: "text", text: "the secret is 42" }],
    }));
  }
  return { content: [{ type: "text", text: "unlocked" }] };
});
await server.connect(new StdioServerTransport());
