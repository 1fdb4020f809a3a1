// Server-Sent Events (the WHATWG grammar) read from a fetch body:
//
//   stream  = *( message )
//   message = *( field | comment ) blank-line
//   field   = name [ ":" [ " " ] value ] EOL      (id, event, data, retry)
//   comment = ":" any EOL                         (limbic's ": keepalive")
//   EOL     = "\r\n" | "\n" | "\r"
//
// limbic sends `id: SEQ`, `event: TYPE`, `data: <event JSON>` (docs/api.md).

/** One dispatched message. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/**
 * The messages of `body` as they arrive. `onBytes` is called for every chunk
 * (comments too), so a caller can tell a live stream from a silent one.
 * A message cut off by the end of the stream is not dispatched.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, onBytes: () => void = () => {}):
    AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | undefined, event: string | undefined, data: string[] = [];
  try {
    for (;;) {
      const {done, value} = await reader.read();
      if (done) return;
      onBytes();
      buffer += decoder.decode(value, {stream: true});
      let end: number;
      // A lone "\r" at the end may be the first half of "\r\n": wait for more.
      while ((end = buffer.search(/\r\n|\n|\r(?!$)/)) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (data.length) yield {id, event, data: data.join('\n')};
          id = undefined; event = undefined; data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (name === 'data') data.push(value);
        else if (name === 'id') id = value;
        else if (name === 'event') event = value;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
