// Reference JCS output from Node.js for the cross-check in test_jcs.py.
// Reads JSON lines: {"bits": hex} (a double), {"text": s} (a string) or
// {"keys": [...]} (an object with those keys); prints one canonical text per line.
// JSON.stringify writes numbers and strings exactly as RFC 8785 does, and
// Array.prototype.sort orders keys by UTF-16 code units, as JCS does.
import { createInterface } from "node:readline";

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const item = JSON.parse(line);
  if ("bits" in item) {
    console.log(JSON.stringify(Buffer.from(item.bits, "hex").readDoubleBE(0)));
  } else if ("text" in item) {
    console.log(JSON.stringify(item.text));
  } else {
    const object = Object.fromEntries(item.keys.map((key, index) => [key, index]));
    console.log(JSON.stringify(object, [...item.keys].sort()));
  }
}
