"""An ONNX model's bytes read and edited at the protobuf wire level, for what the Python layer needs
without the onnx package (and its import time): the main graph's initializers that are also its
inputs (which onnxruntime lets a run feed), and the model with some initializers taken out, so that
those names become plain inputs. Field numbers are onnx.proto's: ModelProto.graph 7,
GraphProto.initializer 5 and .input 11, TensorProto.name 8, ValueInfoProto.name 1."""

MODEL_GRAPH, GRAPH_INITIALIZER, GRAPH_INPUT, TENSOR_NAME, VALUE_INFO_NAME = 7, 5, 11, 8, 1
LENGTH_DELIMITED = 2


class WireError(ValueError):
    """Bytes that are not a well-formed protobuf message where one was expected."""


def _varint(buf, pos, end):
    result = shift = 0
    while True:
        if pos >= end:
            raise WireError('a varint runs past the end of its message')
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise WireError('a varint is longer than 10 bytes')


def _encode_varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _fields(buf, start, end):
    """(field number, wire type, field start, value start, value end) of each field of the message
    in buf[start:end]; a length-delimited value's start is past its length."""
    pos = start
    while pos < end:
        field_start = pos
        key, pos = _varint(buf, pos, end)
        wire_type = key & 7
        if wire_type == 0:
            _, value_end = _varint(buf, pos, end)
        elif wire_type == 1:
            value_end = pos + 8
        elif wire_type == 5:
            value_end = pos + 4
        elif wire_type == LENGTH_DELIMITED:
            length, pos = _varint(buf, pos, end)
            value_end = pos + length
        else:
            raise WireError(f'field {key >> 3} has wire type {wire_type} (groups are not ONNX)')
        if value_end > end:
            raise WireError(f'field {key >> 3} runs past the end of its message')
        yield key >> 3, wire_type, field_start, pos, value_end
        pos = value_end


def _graph(buf):
    """(field start, value start, value end) of the model's graph."""
    found = [f[2:] for f in _fields(buf, 0, len(buf)) if f[0] == MODEL_GRAPH and f[1] == LENGTH_DELIMITED]
    if len(found) != 1:
        raise WireError(f'the model has {len(found)} graphs')
    return found[0]


def _name(buf, start, end, number):
    """The string field `number` of the message in buf[start:end] (the last one, as protobuf)."""
    name = ''
    for field, wire_type, _, s, e in _fields(buf, start, end):
        if field == number and wire_type == LENGTH_DELIMITED:
            name = bytes(buf[s:e]).decode('utf-8', errors='replace')
    return name


def overridable_initializers(data):
    """The names of the main graph's initializers that are also listed as its inputs."""
    buf = memoryview(data)
    _, start, end = _graph(buf)
    inputs, initializers = set(), set()
    for field, wire_type, _, s, e in _fields(buf, start, end):
        if wire_type == LENGTH_DELIMITED and field == GRAPH_INPUT:
            inputs.add(_name(buf, s, e, VALUE_INFO_NAME))
        elif wire_type == LENGTH_DELIMITED and field == GRAPH_INITIALIZER:
            initializers.add(_name(buf, s, e, TENSOR_NAME))
    return frozenset(inputs & initializers)


def without_initializers(data, names):
    """The model's bytes with the main graph's initializers named in `names` left out (everything
    else byte for byte as it was)."""
    buf = memoryview(data)
    graph_field, start, end = _graph(buf)
    graph = bytearray()
    for field, wire_type, field_start, s, e in _fields(buf, start, end):
        if not (field == GRAPH_INITIALIZER and wire_type == LENGTH_DELIMITED
                and _name(buf, s, e, TENSOR_NAME) in names):
            graph += buf[field_start:e]
    key = _encode_varint(MODEL_GRAPH << 3 | LENGTH_DELIMITED)
    return bytes(buf[:graph_field]) + key + _encode_varint(len(graph)) + bytes(graph) + bytes(buf[end:])
