"""coil.proto.TensorValue files (`coil run --inputs` / `--save`) to and from torch tensors, for
the bench scripts that run on the GPU machine from the carried files alone (no protobuf
package there): {DType dtype = 1; repeated int64 shape = 2 (packed); bytes data = 3}."""
import torch

DTYPES = {torch.float32: 1, torch.int64: 5}  # coil.proto.DType


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def encode(t):
    """The TensorValue bytes of a float32 or int64 tensor (made contiguous)."""
    t = t.contiguous()
    shape = b"".join(varint(d) for d in t.shape)
    data = t.numpy().tobytes()
    return (b"\x08" + varint(DTYPES[t.dtype]) + b"\x12" + varint(len(shape)) + shape +
            b"\x1a" + varint(len(data)) + data)


def read_f32(path):
    """A float32 TensorValue file as a torch tensor."""
    buf = open(path, "rb").read()
    pos = [0]

    def read_varint(b, p):
        v, s = 0, 0
        while True:
            byte = b[p[0]]
            p[0] += 1
            v |= (byte & 0x7F) << s
            s += 7
            if byte < 0x80:
                return v
    shape, data = [], b""
    while pos[0] < len(buf):
        key = read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            read_varint(buf, pos)
        elif wire == 2:
            n = read_varint(buf, pos)
            chunk = buf[pos[0]:pos[0] + n]
            pos[0] += n
            if field == 2:
                p = [0]
                while p[0] < len(chunk):  # packed varints
                    shape.append(read_varint(chunk, p))
            elif field == 3:
                data = chunk
        else:
            raise ValueError("unexpected wire type %d in %s" % (wire, path))
    if not data:
        return torch.zeros(shape, dtype=torch.float32)
    return torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(shape)
