// node wasm_json.js MODULE.js FILE: what `inspect_json FILE --all` prints, computed by the
// wasm module (emscripten build of the same core) instead of the native build: the overview,
// then per stage i its JSON, the diff (i-1, i), each node's details and memory plans, then
// the comparison of the file with itself (before and after opening it as the compare file),
// one per line.
'use strict';
const fs = require('fs');
const path = require('path');

const [modulePath, file] = process.argv.slice(2);
require(path.resolve(modulePath))().then((m) => {
  const bytes = fs.readFileSync(file);
  const decoder = new TextDecoder('utf-8');
  const result = (ptr) => decoder.decode(m.HEAPU8.subarray(ptr, ptr + m._coil_result_size()));
  const buffer = m._malloc(Math.max(1, bytes.length));
  m.HEAPU8.set(bytes, buffer);
  const overview = result(m.ccall('coil_open', 'number', ['number', 'number', 'string'],
    [buffer, bytes.length, path.basename(file)]));
  m._free(buffer);
  const lines = [overview];
  const parsed = JSON.parse(overview);
  if (parsed.ok) {
    for (let i = 0; i < parsed.stages.length; ++i) {
      lines.push(result(m.ccall('coil_stage', 'number', ['number'], [i])));
      lines.push(result(m.ccall('coil_diff', 'number', ['number', 'number'], [i === 0 ? 0 : i - 1, i])));
      for (let n = 0; n < parsed.stages[i].node_count; ++n) {
        lines.push(result(m.ccall('coil_node', 'number', ['number', 'number'], [i, n])));
      }
      for (const typed of ['', 's0=7', 's0=x']) {
        lines.push(result(m.ccall('coil_memory', 'number', ['number', 'string'], [i, typed])));
      }
    }
  }
  lines.push(result(m.ccall('coil_compare', 'number', [], [])));
  const again = m._malloc(Math.max(1, bytes.length));
  m.HEAPU8.set(bytes, again);
  lines.push(result(m.ccall('coil_open_compare', 'number', ['number', 'number', 'string'],
    [again, bytes.length, path.basename(file)])));
  m._free(again);
  lines.push(result(m.ccall('coil_compare', 'number', [], [])));
  process.stdout.write(lines.join('\n') + '\n');
  process.exitCode = parsed.ok ? 0 : 1;
}).catch((e) => {
  console.error('wasm_json.js: ' + String(e).slice(0, 500));
  process.exitCode = 2;
});
