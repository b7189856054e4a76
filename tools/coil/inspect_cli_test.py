#!/usr/bin/python3
"""End-to-end test of `coil inspect` over real sockets: what it serves, what it refuses, --export,
and its errors (missing folder, no .pb files, port in use, bad flags).

usage: inspect_cli_test.py COIL PAGE   (PAGE: the page file built into COIL, to compare bytes)
"""
import base64
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest

COIL = os.path.abspath(sys.argv[1])
PAGE = open(sys.argv[2], "rb").read()
TMP = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


class Server:
    """`coil inspect ARGS --port 0` in the background; .url once it printed its address."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([COIL, "inspect", *args, "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()  # blocks until the URL (or exit)
        m = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\n", line)
        if not m:
            self.stop()
            raise AssertionError("no URL on stdout: %r, stderr: %s" % (line, self.stderr))
        self.port = int(m.group(1))
        self.url = line.strip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=10)
        self.stderr = err.decode()


def raw_request(port, data, read=True):
    """Sends raw bytes; returns (status, headers dict, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(data)
        chunks = []
        while read:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    if not read:
        return None
    response = b"".join(chunks)
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = dict(l.split(": ", 1) for l in lines[1:])
    headers = {k.lower(): v for k, v in headers.items()}
    if "content-length" in headers:
        assert int(headers["content-length"]) == len(body) or data.startswith(b"HEAD"), \
            "Content-Length %s but %d body bytes" % (headers["content-length"], len(body))
    return status, headers, body


def get(port, target, method="GET", host=None):
    host = host or "127.0.0.1:%d" % port
    return raw_request(port, ("%s %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (method, target, host))
                       .encode())


def run(*args):
    p = subprocess.run([COIL, "inspect", *args], capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


class InspectServe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(TMP, "artifacts")
        os.makedirs(cls.dir, exist_ok=True)
        cls.report = bytes(range(256)) * 40  # binary, with NUL bytes
        write(os.path.join(cls.dir, "report.pb"), cls.report)
        write(os.path.join(cls.dir, "01_import.pb"), b"import")
        write(os.path.join(cls.dir, "03_inductor.schedule.pb"), b"schedule")
        write(os.path.join(cls.dir, "01_import.txt"), b"text IR")
        write(os.path.join(TMP, "secret.pb"), b"SECRET")
        link = os.path.join(cls.dir, "escape.pb")
        if not os.path.lexists(link):
            os.symlink(os.path.join(TMP, "secret.pb"), link)
        cls.server = Server(cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        # One log line per request on stderr.
        assert "GET /files.json -> 200" in cls.server.stderr, cls.server.stderr

    def test_page(self):
        status, headers, body = get(self.server.port, "/")
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "text/html; charset=utf-8")
        self.assertEqual(headers["connection"], "close")
        self.assertEqual(body, PAGE)

    def test_files_json(self):
        status, headers, body = get(self.server.port, "/files.json")
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(body, b'{"files": ["report.pb", "01_import.pb", '
                               b'"03_inductor.schedule.pb"]}\n')

    def test_files(self):
        self.assertEqual(get(self.server.port, "/files/report.pb")[2], self.report)
        status, headers, body = get(self.server.port, "/files/03_inductor.schedule.pb?x=1")
        self.assertEqual((status, headers["content-type"], body),
                         (200, "application/octet-stream", b"schedule"))
        status, headers, body = get(self.server.port, "/files/report.pb", method="HEAD")
        self.assertEqual((status, headers["content-length"], body),
                         (200, str(len(self.report)), b""))

    def test_refuses_traversal_and_other_files(self):
        for target, want in [("/files/../secret.pb", 403), ("/files/..%2fsecret.pb", 403),
                             ("/files/%2e%2e%2f%2e%2e%2fetc%2fpasswd", 403),
                             ("/files/..%5csecret.pb", 403), ("/files/01_import.txt", 403),
                             ("/files/escape.pb", 404), ("/files/missing.pb", 404),
                             ("/../secret.pb", 404), ("/secret.pb", 404), ("/nothing", 404),
                             ("/files/a%zz.pb", 400)]:
            status, _, body = get(self.server.port, target)
            self.assertEqual(status, want, "%s: %s" % (target, body))
            self.assertNotIn(b"SECRET", body)

    def test_methods_hosts_and_malformed_requests(self):
        self.assertEqual(get(self.server.port, "/", method="POST")[0], 405)
        self.assertEqual(get(self.server.port, "/", host="attacker.example")[0], 403)
        self.assertEqual(get(self.server.port, "/", host="localhost:%d" % self.server.port)[0],
                         200)
        status, _, body = raw_request(self.server.port, b"\x16\x03\x01\x02\x00\x01\r\n\r\n")
        self.assertEqual(status, 400, body)  # e.g. a TLS hello: answered, not fatal
        # A client that leaves mid-request does not stop the server.
        raw_request(self.server.port, b"GET /files.json HTTP/1.1\r\nHo", read=False)
        self.assertEqual(get(self.server.port, "/files.json")[0], 200)


class InspectSingleFile(unittest.TestCase):
    def test_serves_one_file(self):
        d = os.path.join(TMP, "single")
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "02_prims.pb"), b"prims")
        write(os.path.join(d, "report.pb"), b"report")
        server = Server(os.path.join(d, "02_prims.pb"))
        try:
            self.assertEqual(get(server.port, "/files.json")[2], b'{"files": ["02_prims.pb"]}\n')
            self.assertEqual(get(server.port, "/files/02_prims.pb")[2], b"prims")
            self.assertEqual(get(server.port, "/files/report.pb")[0], 404)
        finally:
            server.stop()


class InspectExport(unittest.TestCase):
    def test_export_embeds_the_report(self):
        d = os.path.join(TMP, "export")
        os.makedirs(d, exist_ok=True)
        report = bytes(range(256)) * 3
        write(os.path.join(d, "report.pb"), report)
        write(os.path.join(d, "01_import.pb"), b"import")
        out = os.path.join(TMP, "shared.html")
        code, stdout, stderr = run(d, "--export", out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("wrote " + out, stderr)
        self.assertIn("1 other .pb file(s)", stderr)
        html = open(out, "rb").read()
        m = re.search(rb'<script id="coil-embedded" type="application/octet-stream" '
                      rb'data-name="report.pb">([A-Za-z0-9+/=]+)</script>', html)
        self.assertIsNotNone(m, "no embedded report in the export")
        self.assertEqual(base64.b64decode(m.group(1)), report)
        # The export is the page with the element in place of the empty one (or before </body>).
        rest = html[:m.start()] + html[m.end():]
        empty = re.search(rb'<script id="coil-embedded"[^>]*>\s*</script>', PAGE)
        want = PAGE[:empty.start()] + PAGE[empty.end():] if empty else PAGE
        self.assertEqual(rest.replace(b"\n</body>", b"</body>"),
                         want.replace(b"\n</body>", b"</body>"))
        self.assertFalse(os.path.exists(out + ".tmp"))

    def test_export_leaves_weights_out_unless_asked(self):
        def ld(field, payload):  # a length-delimited protobuf field
            n, size = len(payload), b""
            while True:
                size += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
                n >>= 7
                if not n:
                    break
            return bytes([(field << 3) | 2]) + size + payload
        # CompileReport.stages[0] = StageArtifact{graph: Graph{constants: [Constant{raw}]}}.
        report = ld(4, ld(10, ld(3, ld(2, b"\x7f" * 4096))))
        d = os.path.join(TMP, "weights")
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "report.pb"), report)
        embedded = {}
        for flags in ((), ("--with-weights",)):
            out = os.path.join(TMP, "weights%d.html" % len(flags))
            code, _, stderr = run(d, "--export", out, *flags)
            self.assertEqual(code, 0, stderr)
            m = re.search(rb'data-name="report.pb">([A-Za-z0-9+/=]+)</script>',
                          open(out, "rb").read())
            embedded[flags] = base64.b64decode(m.group(1))
        self.assertEqual(embedded[("--with-weights",)], report)
        light = embedded[()]
        self.assertLess(len(light), 100)  # a ConstantRef: 16-byte hash + length
        self.assertNotIn(b"\x7f" * 64, light)
        self.assertIn(b"\x80\x20", light)  # the length 4096 as a varint
        code, _, stderr = run(d, "--with-weights")
        self.assertEqual(code, 2)
        self.assertIn("--with-weights goes with --export", stderr)

    def test_export_of_one_file(self):
        d = os.path.join(TMP, "export1")
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "graph.pb"), b"\x22\x00")
        out = os.path.join(TMP, "graph.html")
        code, _, stderr = run(os.path.join(d, "graph.pb"), "--export", out)
        self.assertEqual(code, 0, stderr)
        self.assertIn(b'data-name="graph.pb">IgA=</script>', open(out, "rb").read())

    def test_export_to_an_unwritable_place(self):
        d = os.path.join(TMP, "export2")
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "report.pb"), b"x")
        code, _, stderr = run(d, "--export", os.path.join(TMP, "no", "such", "dir", "x.html"))
        self.assertEqual(code, 1)
        self.assertIn("cannot write", stderr)


class InspectExportSafety(unittest.TestCase):
    """Expected errors and leftovers of --export (it once wrote through a fixed FILE.tmp,
    following links, and renamed over device nodes)."""

    def source(self, name):
        d = os.path.join(TMP, name)
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "report.pb"), b"x")
        return d

    def test_a_link_named_like_the_old_temporary_is_not_followed(self):
        d = self.source("safety1")
        victim = os.path.join(d, "victim.txt")
        write(victim, b"precious")
        out = os.path.join(d, "out.html")
        os.symlink(victim, out + ".tmp")
        code, _, stderr = run(d, "--export", out)
        self.assertEqual(code, 0, stderr)
        self.assertEqual(open(victim, "rb").read(), b"precious")
        self.assertTrue(os.path.islink(out + ".tmp"))
        self.assertEqual(sorted(os.listdir(d)), ["out.html", "out.html.tmp", "report.pb",
                                                 "victim.txt"])

    def test_an_existing_tmp_file_is_kept(self):
        d = self.source("safety2")
        write(os.path.join(d, "notes.html.tmp"), b"my notes")
        code, _, stderr = run(d, "--export", os.path.join(d, "notes.html"))
        self.assertEqual(code, 0, stderr)
        self.assertEqual(open(os.path.join(d, "notes.html.tmp"), "rb").read(), b"my notes")

    def test_a_symbolic_link_target_is_refused(self):
        d = self.source("safety3")
        victim = os.path.join(d, "victim.txt")
        write(victim, b"precious")
        out = os.path.join(d, "out.html")
        os.symlink(victim, out)
        code, _, stderr = run(d, "--export", out)
        self.assertEqual(code, 1)
        self.assertIn("coil inspect: cannot write '%s': it is a symbolic link (name its target "
                      "instead)" % out, stderr)
        self.assertEqual(open(victim, "rb").read(), b"precious")

    def test_a_device_node_target_is_refused(self):
        d = self.source("safety4")
        code, _, stderr = run(d, "--export", "/dev/null")
        self.assertEqual(code, 1)
        self.assertIn("coil inspect: cannot write '/dev/null': it is not a regular file (a "
                      "character device)", stderr)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))

    def test_a_folder_target_is_refused(self):
        d = self.source("safety5")
        code, _, stderr = run(d, "--export", d)
        self.assertEqual(code, 1)
        self.assertIn("coil inspect: cannot write '%s': it is a directory" % d, stderr)

    def test_a_folder_as_page_is_refused(self):
        d = self.source("safety6")
        code, _, stderr = run(d, "--page", d, "--export", os.path.join(d, "p.html"))
        self.assertEqual(code, 1)
        self.assertIn("--page: cannot read '%s': it is a directory, not a file" % d, stderr)


class InspectErrors(unittest.TestCase):
    def test_missing_source(self):
        code, stdout, stderr = run(os.path.join(TMP, "does-not-exist"))
        self.assertEqual(code, 1)
        self.assertEqual(stdout, "")
        self.assertIn("does-not-exist' does not exist", stderr)

    def test_folder_without_pb_files(self):
        d = os.path.join(TMP, "empty")
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "notes.txt"), b"x")
        code, _, stderr = run(d)
        self.assertEqual(code, 1)
        self.assertIn("has no .pb files", stderr)

    def test_not_a_pb_file(self):
        path = os.path.join(TMP, "model.onnx")
        write(path, b"x")
        code, _, stderr = run(path)
        self.assertEqual(code, 1)
        self.assertIn("is not a .pb file", stderr)

    def test_port_in_use(self):
        d = os.path.join(TMP, "busy")
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "report.pb"), b"x")
        server = Server(d)
        try:
            code, stdout, stderr = run(d, "--port", str(server.port))
            self.assertEqual(code, 1)
            self.assertEqual(stdout, "")
            self.assertIn("127.0.0.1:%d is already in use" % server.port, stderr)
        finally:
            server.stop()

    def test_usage_errors(self):
        for args, message in [((), "expected one SOURCE"), (("a", "b"), "expected one SOURCE"),
                              (("d", "--port", "http"), "--port must be an integer"),
                              (("d", "--port", "70000"), "--port must be an integer"),
                              (("d", "--export", "x.html", "--port", "1"), "takes no --port"),
                              (("d", "--bogus"), "unknown flag --bogus")]:
            code, _, stderr = run(*args)
            self.assertEqual(code, 2, args)
            self.assertIn(message, stderr)
        code, stdout, _ = run("--help")
        self.assertEqual(code, 0)
        self.assertIn("usage: coil inspect SOURCE", stdout)

    def test_missing_page_override(self):
        d = os.path.join(TMP, "page")
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "report.pb"), b"x")
        code, _, stderr = run(d, "--page", os.path.join(TMP, "nope.html"), "--export",
                              os.path.join(TMP, "p.html"))
        self.assertEqual(code, 1)
        self.assertIn("--page: cannot open", stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
