package tinymodel

import (
	"encoding/binary"
	"maps"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// The ONNX protobuf (onnx/onnx.proto, IR version 8), hand-encoded: only the
// fields these graphs use. Field numbers are those of onnx.proto.
const (
	irVersion = 8  // ONNX IR version 8 (ONNX 1.10), read by ONNX Runtime 1.10 and later
	opset     = 13 // the default-domain operator set of every node

	elemFloat = 1 // TensorProto.DataType FLOAT
	elemInt64 = 7 // TensorProto.DataType INT64

	attrInt = 2 // AttributeProto.AttributeType INT
)

// node is one NodeProto: op applied to inputs, giving outputs.
type node struct {
	op      string
	inputs  []string
	outputs []string
	ints    map[string]int64 // integer attributes
}

// tensor is an initializer: float32 or int64 values of a shape.
type tensor struct {
	name   string
	dims   []int64
	floats []float32
	ints   []int64
}

// value is a graph input or output: a tensor of elem type and shape, where
// a dimension is a number or a symbolic name.
type value struct {
	name string
	elem int
	dims []any // int64 or string
}

type graph struct {
	name         string
	nodes        []node
	initializers []tensor
	inputs       []value
	outputs      []value
}

func appendString(b []byte, field protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, field protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, field protowire.Number, v int64) []byte {
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

// encodeModel returns the ModelProto bytes of g.
func encodeModel(g graph, producer string) []byte {
	var m []byte
	m = appendVarint(m, 1, irVersion)                  // ModelProto.ir_version
	m = appendString(m, 2, producer)                   // ModelProto.producer_name
	m = appendBytes(m, 7, encodeGraph(g))              // ModelProto.graph
	m = appendBytes(m, 8, appendVarint(nil, 2, opset)) // ModelProto.opset_import: OperatorSetIdProto.version, default domain
	return m
}

func encodeGraph(g graph) []byte {
	var b []byte
	for _, n := range g.nodes {
		b = appendBytes(b, 1, encodeNode(n)) // GraphProto.node
	}
	b = appendString(b, 2, g.name) // GraphProto.name
	for _, t := range g.initializers {
		b = appendBytes(b, 5, encodeTensor(t)) // GraphProto.initializer
	}
	for _, v := range g.inputs {
		b = appendBytes(b, 11, encodeValue(v)) // GraphProto.input
	}
	for _, v := range g.outputs {
		b = appendBytes(b, 12, encodeValue(v)) // GraphProto.output
	}
	return b
}

func encodeNode(n node) []byte {
	var b []byte
	for _, in := range n.inputs {
		b = appendString(b, 1, in) // NodeProto.input
	}
	for _, out := range n.outputs {
		b = appendString(b, 2, out) // NodeProto.output
	}
	b = appendString(b, 3, n.outputs[0]) // NodeProto.name
	b = appendString(b, 4, n.op)         // NodeProto.op_type
	for _, name := range slices.Sorted(maps.Keys(n.ints)) {
		var a []byte
		a = appendString(a, 1, name)         // AttributeProto.name
		a = appendVarint(a, 3, n.ints[name]) // AttributeProto.i
		a = appendVarint(a, 20, attrInt)     // AttributeProto.type
		b = appendBytes(b, 5, a)             // NodeProto.attribute
	}
	return b
}

func encodeTensor(t tensor) []byte {
	var b, dims []byte
	for _, d := range t.dims {
		dims = protowire.AppendVarint(dims, uint64(d))
	}
	b = appendBytes(b, 1, dims) // TensorProto.dims (packed)
	var raw []byte
	if t.ints != nil {
		b = appendVarint(b, 2, elemInt64) // TensorProto.data_type
		for _, v := range t.ints {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
		}
	} else {
		b = appendVarint(b, 2, elemFloat)
		for _, v := range t.floats {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
	}
	b = appendString(b, 8, t.name) // TensorProto.name
	return appendBytes(b, 9, raw)  // TensorProto.raw_data (little-endian)
}

func encodeValue(v value) []byte {
	var shape []byte
	for _, d := range v.dims {
		var dim []byte
		switch d := d.(type) {
		case int64:
			dim = appendVarint(nil, 1, d) // Dimension.dim_value
		case string:
			dim = appendString(nil, 2, d) // Dimension.dim_param
		}
		shape = appendBytes(shape, 1, dim) // TensorShapeProto.dim
	}
	tt := appendVarint(nil, 1, int64(v.elem)) // TypeProto.Tensor.elem_type
	tt = appendBytes(tt, 2, shape)            // TypeProto.Tensor.shape
	typ := appendBytes(nil, 1, tt)            // TypeProto.tensor_type
	b := appendString(nil, 1, v.name)         // ValueInfoProto.name
	return appendBytes(b, 2, typ)             // ValueInfoProto.type
}
