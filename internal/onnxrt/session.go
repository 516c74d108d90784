package onnxrt

import (
	"fmt"
	"slices"

	ort "github.com/yalue/onnxruntime_go"
)

// Session is one model loaded into ONNX Runtime, opened once and run any
// number of times, concurrently too (ONNX Runtime's Run is thread-safe).
// Its inputs are int64 tensors of one shape, its output one float32 tensor.
type Session struct {
	s      *ort.DynamicAdvancedSession
	inputs []string // the model's inputs, in the order Run takes them
}

// Open loads the model file (Init must have succeeded) with threads intra-op
// threads (0: ONNX Runtime's default, one per core). The model must have
// every input in required, may have those in optional, must have no other
// input, and must have output; Inputs reports the ones it has. A model that
// cannot be parsed or has other inputs and outputs is an error naming them.
func Open(model string, required, optional []string, output string, threads int) (*Session, error) {
	ins, outs, err := ort.GetInputOutputInfo(model)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, in := range ins {
		if !slices.Contains(required, in.Name) && !slices.Contains(optional, in.Name) {
			return nil, fmt.Errorf("unexpected model input %q (the model's inputs: %s; want %v, optionally %v)", in.Name, infoNames(ins), required, optional)
		}
		names = append(names, in.Name)
	}
	for _, r := range required {
		if !slices.Contains(names, r) {
			return nil, fmt.Errorf("model has no input %q (its inputs: %s)", r, infoNames(ins))
		}
	}
	if !slices.ContainsFunc(outs, func(o ort.InputOutputInfo) bool { return o.Name == output }) {
		return nil, fmt.Errorf("model has no output %q (its outputs: %s)", output, infoNames(outs))
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if threads > 0 {
		if err := opts.SetIntraOpNumThreads(threads); err != nil {
			return nil, err
		}
	}
	s, err := ort.NewDynamicAdvancedSession(model, names, []string{output}, opts)
	if err != nil {
		return nil, err
	}
	return &Session{s: s, inputs: names}, nil
}

func infoNames(infos []ort.InputOutputInfo) string {
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	return fmt.Sprint(names)
}

// Inputs returns the model's input names, in the order Run takes them.
func (s *Session) Inputs() []string { return slices.Clone(s.inputs) }

// Run runs the model on one int64 tensor per input (in Inputs order), each
// of the given shape (e.g. [batch, sequence] token ids), and returns the
// output's values (row-major) and shape.
func (s *Session) Run(shape []int64, inputs ...[]int64) ([]float32, []int64, error) {
	if len(inputs) != len(s.inputs) {
		return nil, nil, fmt.Errorf("onnxrt: %d inputs given, the model has %d", len(inputs), len(s.inputs))
	}
	in := make([]ort.Value, 0, len(inputs))
	defer func() {
		for _, v := range in {
			v.Destroy()
		}
	}()
	for _, data := range inputs {
		t, err := ort.NewTensor(ort.NewShape(shape...), data)
		if err != nil {
			return nil, nil, err
		}
		in = append(in, t)
	}
	out := []ort.Value{nil}
	if err := s.s.Run(in, out); err != nil {
		return nil, nil, err
	}
	defer out[0].Destroy()
	t, ok := out[0].(*ort.Tensor[float32])
	if !ok {
		return nil, nil, fmt.Errorf("onnxrt: model output is %v, want a float32 tensor", out[0].DataType())
	}
	return slices.Clone(t.GetData()), slices.Clone(t.GetShape()), nil
}

// Close releases the session; it must not be running.
func (s *Session) Close() error { return s.s.Destroy() }
