package pickle

import (
	"fmt"
)

// storageTypes are the typed storage classes a state dict names, with the
// safetensors dtype name and element size of each.
var storageTypes = map[string]struct {
	dtype string
	size  int
}{
	"FloatStorage": {"F32", 4}, "HalfStorage": {"F16", 2}, "BFloat16Storage": {"BF16", 2},
	"DoubleStorage": {"F64", 8}, "LongStorage": {"I64", 8}, "IntStorage": {"I32", 4},
	"ShortStorage": {"I16", 2}, "CharStorage": {"I8", 1}, "ByteStorage": {"U8", 1},
	"BoolStorage": {"BOOL", 1},
}

// storageClass is the value a GLOBAL torch.XStorage pushes.
type storageClass struct {
	dtype string
	size  int
}

// storage is one torch storage: a flat array of elements. Data is filled
// when the archive member or the legacy data section is read.
type storage struct {
	key   string
	dtype string
	size  int   // bytes per element
	numel int64 // elements
	data  []byte
	// a legacy view into another storage
	root   *storage
	offset int64 // elements into root
}

// tensorRef is what _rebuild_tensor_v2 returns: a strided view of a storage.
type tensorRef struct {
	st     *storage
	offset int64
	shape  []int64
	stride []int64
}

// resolveTorch is the allow-list for state dicts. It names nothing that
// can run code: every entry is a Go function that builds data.
func resolveTorch(module, name string) (*Callable, error) {
	full := module + "." + name
	if st, ok := storageTypes[name]; ok && module == "torch" {
		return &Callable{Name: full, Value: storageClass{st.dtype, st.size}}, nil
	}
	switch full {
	case "collections.OrderedDict":
		return &Callable{Name: full, Call: newOrderedDict}, nil
	case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
		return &Callable{Name: full, Call: rebuildTensor}, nil
	case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state":
		return &Callable{Name: full, Call: rebuildParameter}, nil
	}
	return nil, fmt.Errorf("%w %s (a state dict needs only tensors, storages and OrderedDict)", ErrForbidden, full)
}

func newOrderedDict(args Tuple) (any, error) {
	d := NewDict()
	if len(args) == 0 {
		return d, nil
	}
	if l, ok := args[0].(*List); ok && len(args) == 1 {
		for _, it := range l.Items {
			kv, ok := it.(Tuple)
			if !ok || len(kv) != 2 {
				return nil, fmt.Errorf("%w: OrderedDict item %T", ErrFormat, it)
			}
			d.Set(kv[0], kv[1])
		}
		return d, nil
	}
	return nil, fmt.Errorf("%w: OrderedDict(%d arguments)", ErrFormat, len(args))
}

// rebuildTensor is _rebuild_tensor_v2(storage, storage_offset, size,
// stride, requires_grad, backward_hooks[, metadata]) and the older
// _rebuild_tensor(storage, storage_offset, size, stride).
func rebuildTensor(args Tuple) (any, error) {
	if len(args) < 4 {
		return nil, fmt.Errorf("%w: %d arguments", ErrFormat, len(args))
	}
	st, ok := args[0].(*storage)
	if !ok {
		return nil, fmt.Errorf("%w: storage argument is a %T", ErrFormat, args[0])
	}
	off, ok := Int(args[1])
	if !ok || off < 0 {
		return nil, fmt.Errorf("%w: storage offset %v", ErrFormat, args[1])
	}
	shape, err := ints(args[2])
	if err != nil {
		return nil, fmt.Errorf("size: %w", err)
	}
	stride, err := ints(args[3])
	if err != nil || len(stride) != len(shape) {
		return nil, fmt.Errorf("%w: stride %v for size %v", ErrFormat, args[3], shape)
	}
	return &tensorRef{st: st, offset: off, shape: shape, stride: stride}, nil
}

// rebuildParameter unwraps nn.Parameter(data, requires_grad, hooks[, state]).
func rebuildParameter(args Tuple) (any, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("%w: no data", ErrFormat)
	}
	if _, ok := args[0].(*tensorRef); !ok {
		return nil, fmt.Errorf("%w: parameter of a %T", ErrFormat, args[0])
	}
	return args[0], nil
}

func ints(v any) ([]int64, error) {
	t, ok := v.(Tuple)
	if !ok {
		return nil, fmt.Errorf("%w: %T, want a tuple", ErrFormat, v)
	}
	out := make([]int64, len(t))
	for i, x := range t {
		n, ok := Int(x)
		if !ok || n < 0 || n > 1<<50 {
			return nil, fmt.Errorf("%w: %v", ErrFormat, x)
		}
		out[i] = n
	}
	return out, nil
}
