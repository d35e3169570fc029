// TEMPORARY: the `lantern/suggestMentions` types of the contract (notes/MENTIONS.md), until
// the server branch's protocol.ts lands; then these come from protocol.ts.

import type { Range } from "./protocol";

export interface MentionSymbol {
  name: string;
  kind?: string;
  containerName?: string;
  uri: string;
  range: Range;
}

export interface SuggestMentionsParams {
  query: string;
  symbols?: MentionSymbol[];
}

export interface MentionSuggestion {
  kind: "file" | "folder" | "symbol";
  label: string;
  detail?: string;
  uri: string;
  range?: Range;
  refused?: string;
}

export interface SuggestMentionsResult {
  items: MentionSuggestion[];
}
