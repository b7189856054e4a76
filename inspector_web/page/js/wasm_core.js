// The bridge to the C++ core compiled to WebAssembly (inspector_web/wasm_api.cc): copies file
// bytes into the module and parses the JSON documents it returns (core/inspector.h).
'use strict';

coil.Core = class {
  // `factory` is the emscripten module factory (CoilInspectorModule).
  static async create(factory) {
    const core = new coil.Core();
    core.module = await factory();
    return core;
  }

  // Opens a file; returns the overview ({ok, stages, ...} or {ok: false, error}).
  open(bytes, name) {
    const m = this.module;
    const ptr = m._malloc(Math.max(1, bytes.length));
    try {
      m.HEAPU8.set(bytes, ptr);  // HEAPU8 is re-read: malloc may have grown the memory
      return this.result(m.ccall('coil_open', 'number', ['number', 'number', 'string'],
        [ptr, bytes.length, name]));
    } finally {
      m._free(ptr);
    }
  }

  // Loads a second file to compare the open one with ({ok, file, stages} or {ok: false, error}).
  openCompare(bytes, name) {
    const m = this.module;
    const ptr = m._malloc(Math.max(1, bytes.length));
    try {
      m.HEAPU8.set(bytes, ptr);
      return this.result(m.ccall('coil_open_compare', 'number', ['number', 'number', 'string'],
        [ptr, bytes.length, name]));
    } finally {
      m._free(ptr);
    }
  }

  // The open file against the compare file (core/compare.h).
  compare() {
    return this.result(this.module.ccall('coil_compare', 'number', [], []));
  }

  stage(index) {
    return this.result(this.module.ccall('coil_stage', 'number', ['number'], [index]));
  }

  node(stage, index) {
    return this.result(this.module.ccall('coil_node', 'number', ['number', 'number'],
      [stage, index]));
  }

  diff(before, after) {
    return this.result(this.module.ccall('coil_diff', 'number', ['number', 'number'],
      [before, after]));
  }

  // A schedule stage's memory plan at symbol values ("batch=4,..."; '' for the defaults).
  memory(stage, typed) {
    return this.result(this.module.ccall('coil_memory', 'number', ['number', 'string'],
      [stage, typed]));
  }

  // A stage's layout with name path groups collapsed ("3,5": group indices; "auto").
  view(stage, collapsed) {
    return this.result(this.module.ccall('coil_view', 'number', ['number', 'string'],
      [stage, collapsed]));
  }

  // The JSON document at `ptr` (its length from coil_result_size), parsed.
  result(ptr) {
    const size = this.module._coil_result_size();
    if (!this.decoder) this.decoder = new TextDecoder('utf-8');
    return JSON.parse(this.decoder.decode(this.module.HEAPU8.subarray(ptr, ptr + size)));
  }
};
