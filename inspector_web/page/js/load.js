// Where the page's file comes from, in order of preference:
//  1. an embedded report: the base64 text of the script element with id coil-embedded
//     (type application/octet-stream, data-name the file name), filled by
//     `coil inspect --export`;
//  2. over http(s): GET files.json -> {"files": ["report.pb", ...]}, each file at
//     files/<name> (served by `coil inspect DIR`); the first opens, the rest are selectable;
//  3. otherwise a file picker and a drop zone.
'use strict';

coil.embeddedFile = function () {
  const tag = document.getElementById('coil-embedded');
  if (!tag) return null;
  const t0 = performance.now();
  const text = tag.textContent.replace(/\s+/g, '');
  if (!text) return null;
  let binary;
  try {
    binary = atob(text);
  } catch (e) {
    throw new Error(`the embedded report (#coil-embedded) is not valid base64: ${e.message}`);
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; ++i) bytes[i] = binary.charCodeAt(i);
  return { name: tag.dataset.name || 'report.pb', bytes, decodeMs: performance.now() - t0 };
};

// The served file list, or null when the page is not served by `coil inspect` (file://, or no
// files.json).
coil.servedFiles = async function () {
  if (!/^https?:$/.test(location.protocol)) return null;
  let response;
  try {
    response = await fetch('files.json', { cache: 'no-store' });
  } catch (e) {
    return null;
  }
  if (!response.ok) return null;
  const list = await response.json();
  if (!list || !Array.isArray(list.files)) throw new Error('files.json has no "files" list');
  return list.files.map(String);
};

coil.fetchServed = async function (name) {
  const response = await fetch('files/' + encodeURIComponent(name), { cache: 'no-store' });
  if (!response.ok) throw new Error(`${name}: the server answered ${response.status} ${response.statusText}`);
  return { name, bytes: new Uint8Array(await response.arrayBuffer()) };
};

coil.readPicked = async function (file) {
  return { name: file.name, bytes: new Uint8Array(await file.arrayBuffer()) };
};

// Calls onFile(File) for files chosen with the picker or dropped anywhere on the page.
coil.installFileInputs = function (onFile) {
  const input = document.getElementById('file-input');
  input.addEventListener('change', () => {
    if (input.files.length) onFile(input.files[0]);
    input.value = '';
  });
  let depth = 0;
  window.addEventListener('dragenter', (ev) => { ev.preventDefault(); if (++depth === 1) document.body.classList.add('dragging'); });
  window.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; document.body.classList.remove('dragging'); } });
  window.addEventListener('dragover', (ev) => ev.preventDefault());
  window.addEventListener('drop', (ev) => {
    ev.preventDefault();
    depth = 0;
    document.body.classList.remove('dragging');
    if (ev.dataTransfer && ev.dataTransfer.files.length) onFile(ev.dataTransfer.files[0]);
  });
};
