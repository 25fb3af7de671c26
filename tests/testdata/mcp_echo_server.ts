/**
 * A tiny MCP server on stdio for tests, written with the official SDK's low-level `Server`:
 * `echo {text}` returns the text, `fail` returns an error result, `Shout-Loud {text}` (a name
 * that needs sanitizing) upper-cases, `exit` makes the process exit mid-call.
 *
 * @module
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const TEXT_INPUT = {
  type: "object" as const,
  properties: { text: { type: "string", description: "Text to send back." } },
  required: ["text"],
};

const server = new Server({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: "echo",
      description: "Return the text unchanged.",
      inputSchema: TEXT_INPUT,
      annotations: { readOnlyHint: true },
    },
    { name: "fail", description: "Always fail.", inputSchema: { type: "object" as const } },
    { name: "Shout-Loud", description: "Return the text in capitals.", inputSchema: TEXT_INPUT },
    { name: "exit", description: "Exit the server process.", inputSchema: { type: "object" } },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, (request: CallToolRequest): CallToolResult => {
  const text = String(request.params.arguments?.text ?? "");
  switch (request.params.name) {
    case "echo":
      return { content: [{ type: "text", text }] };
    case "Shout-Loud":
      return { content: [{ type: "text", text: text.toUpperCase() }] };
    case "fail":
      return { content: [{ type: "text", text: "fail: this tool always fails" }], isError: true };
    case "exit":
      Deno.exit(3);
      break;
  }
  return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
});

await server.connect(new StdioServerTransport());
