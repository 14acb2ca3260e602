// Package ui holds flowchat's Fyne screens and widgets. It talks to the rest
// of the program only through the small interfaces declared here, which the
// app layer adapts; it never imports the engine. Conversations and settings
// are the app/store and app/presets types, which carry no engine either.
//
// Threading: widgets are touched only on the Fyne UI goroutine. Work that
// happens elsewhere (loading a model, a reply being generated, the next
// token's explanation, disk writes) reaches them through one boundary, the
// post function: fyne.Do in the app, a queue pumped by the test in tests.
package ui

import (
	"context"
	"errors"
	"time"

	"flowchat/app/presets"
	"flowchat/app/store"
)

// Roles of a Message, as chat templates name them.
const (
	RoleSystem    = store.RoleSystem
	RoleUser      = store.RoleUser
	RoleAssistant = store.RoleAssistant
)

// Message is one turn sent to the engine. Content is markdown.
type Message struct {
	Role, Content string
}

// Request is one reply to generate.
type Request struct {
	Messages []Message // the system prompt first, when there is one
	Sampling presets.Params
	// OnExplain, when set, receives each step's sampling explanation on the
	// generating goroutine, before the step's token is drawn.
	OnExplain func(Explanation)
	// OnPrefill, when set, hears the prompt being evaluated on the
	// generating goroutine: done of total tokens (those reused from the
	// cache are not counted).
	OnPrefill func(done, total int)
	// ContextShift asks the engine to keep generating past a full context
	// by dropping the oldest tokens after the first few (Stats.Shifted
	// counts them).
	ContextShift bool
	// OnWait, when set, hears why the reply waits before it starts (the
	// engine's KV cache is full of other conversations' replies).
	OnWait func(reason string)
}

// Stop reasons an Engine reports in Stats.StopReason.
const (
	StopEOG       = "eog"       // the model ended its turn
	StopLength    = "length"    // MaxTokens reached
	StopContext   = "context"   // the context window is full
	StopCancelled = "cancelled" // the user stopped it
)

// Stats describes one generated reply.
type Stats struct {
	PromptTokens int // prompt tokens evaluated (after cache reuse)
	CachedTokens int // prompt tokens reused from the cache
	GenTokens    int
	// TimeToFirstToken covers prompt processing; Total runs from the call
	// to the last token.
	TimeToFirstToken, Total time.Duration
	StopReason              string
	Shifted                 int // tokens a context shift dropped during the reply
	// Drafted and DraftAccepted count speculative decoding's drafts and
	// those kept (zero without speculation).
	Drafted, DraftAccepted int
}

// Explanation is one step of the sampler chain seen stage by stage: what
// the "next token" chart draws.
type Explanation struct {
	Decoding string
	Chosen   string // text of the token the step picks
	Stages   []StageReport
}

// StageReport is what one stage did to the candidates.
type StageReport struct {
	Stage      string
	In, Out    int         // candidates entering and leaving
	Candidates []Candidate // the most probable entering, most probable first
}

// Candidate is one token at one stage; probabilities are renormalised over
// the candidates alive at that point.
type Candidate struct {
	Text    string
	PBefore float32 // entering the stage
	P       float32 // leaving it; 0 when removed
	Kept    bool
	Chosen  bool // the token the step picks
}

// ModelInfo describes a model file for people.
type ModelInfo struct {
	Path         string
	Name         string
	Arch         string
	Params       int64 // weights
	Quant        string
	FileSize     int64 // bytes
	ContextTrain int   // tokens
	Layers       int
	Bundled      bool // the demo model that ships with the app
}

// Engine is a loaded model.
type Engine interface {
	Info() ModelInfo
	// ContextSize is the context window in tokens.
	ContextSize() int
	// Device says where it runs, e.g. "CPU · 2 threads".
	Device() string
	// CountTokens returns the prompt length of msgs in tokens, chat
	// template and generation prompt included.
	CountTokens(msgs []Message) (int, error)
	// Generate replies to req, calling onPiece with each piece of text as it
	// is produced, from the calling goroutine. Cancelling ctx stops it: it
	// then returns the stats of what was produced and StopCancelled.
	Generate(ctx context.Context, req Request, onPiece func(text string)) (Stats, error)
	// Explain returns what the first step of a reply to req would see. It
	// may return ErrBusy while a reply is being generated.
	Explain(ctx context.Context, req Request) (Explanation, error)
	// Close releases the model, after waiting for a Generate or Explain
	// in progress to return.
	Close() error
}

// EngineLocal names the local engine in store.Message.Engine.
const EngineLocal = "local"

// RemoteEngine is an Engine that runs on another server (an
// OpenAI-compatible endpoint the user saved).
type RemoteEngine interface {
	Engine
	// Endpoint is the saved endpoint's name.
	Endpoint() string
	// Unsupported maps the sampling panel's keys the server cannot honour
	// to the reason; the panel disables them and shows it.
	Unsupported() map[string]string
}

// engineName is what a reply records as its engine: "local", or
// "remote:" and the endpoint's name.
func engineName(e Engine) string {
	if r, ok := e.(RemoteEngine); ok {
		return "remote:" + r.Endpoint()
	}
	return EngineLocal
}

// Remotes connects to remote inference servers. Keys go straight to the
// app's key files: the UI holds one only while it is typed.
type Remotes interface {
	// SaveKey stores endpoint id's API key ("" removes it).
	SaveKey(id, key string) error
	// Models lists the endpoint's models; it talks to the network, off
	// the UI goroutine.
	Models(ctx context.Context, e store.Endpoint) ([]string, error)
	// Connect returns an engine answering with model on e.
	Connect(ctx context.Context, e store.Endpoint, model string) (RemoteEngine, error)
	// Dialects are the choices of the endpoint form ("" = detect first).
	Dialects() []string
}

// ErrBusy is returned by Engine.Explain while the model is generating.
var ErrBusy = errors.New("the model is busy")

// LoadOptions are the load dialog's choices. Keep the fields in step with
// store.LoadSettings, which converts to and from it.
type LoadOptions struct {
	Context   int // tokens; 0 = the model's default
	Threads   int // 0 = all cores
	GPULayers int // 0 = CPU only
	// GPUAuto offloads as many layers as fit the free GPU memory (the
	// library decides at load; GPULayers is the dialog's estimate of it).
	GPUAuto bool
	Quant   string // re-quantize the weight matrices at load to this type; "" = as stored
	KVType  string // KV cache element type; "" = the engine's default
	Mmap    bool   // decode from the file mapping: faster load, slower decode
	// Speculative decoding (see store.LoadSettings): Draft "", "ngram",
	// "self" or "model".
	Draft      string
	DraftQuant string
	DraftModel string
	DraftN     int
	SpecAccept string
	// Devices are the IDs (GPUDevice.ID) of the devices offloaded layers
	// go to, in order; nil = GPUStatus.Default. With several: Split is
	// one share per device (nil = equal), SplitMode "layer" (""),
	// "tensor" or "hybrid", and TensorGroup hybrid's devices per group,
	// which must divide the device count (the CLI's --split, --split-mode
	// and --tensor-group).
	Devices     []string
	Split       []float64
	SplitMode   string
	TensorGroup int
}

// Choice is one entry of a load dialog selector.
type Choice struct {
	Value, Label string
}

// LoadChoices are what the engine offers for the load dialog's selectors;
// the first of each list is the default.
type LoadChoices struct {
	Quants  []Choice
	KVTypes []Choice
}

// GPUStatus says whether layers can be offloaded, to which devices, and
// why not.
type GPUStatus struct {
	Usable bool   // some device can be chosen
	Reason string // why none can, in words a user can act on; or what else was not found
	// Devices are every device found: each CUDA device, each ROCm device,
	// and the CPU stand-ins a --devices list names.
	Devices []GPUDevice
	// Default are the IDs chosen when a model has no saved choice: the
	// --devices list, else the first usable device.
	Default []string
}

// GPUDevice is one device offloaded layers can go to.
type GPUDevice struct {
	ID    string // "cuda:1", "hip:0", "cpu:1": what LoadOptions.Devices and --devices name
	Name  string // "NVIDIA H100", "CPU stand-in"
	Label string // "cuda:1 NVIDIA H100 (CUDA 12.4)"
	// Free and Total are bytes of device memory now; Free is 0 when
	// unknown (auto then counts Total).
	Free, Total uint64
	Problem     string // why it cannot be chosen ("" = it can)
}

// Device returns the device with id.
func (s GPUStatus) Device(id string) (GPUDevice, bool) {
	for _, d := range s.Devices {
		if d.ID == id {
			return d, true
		}
	}
	return GPUDevice{}, false
}

// MemoryEstimate is what a load choice needs, in bytes.
type MemoryEstimate struct {
	RAM, VRAM uint64 // VRAM: over every device
	// Devices are each chosen device's part when layers are offloaded, in
	// LoadOptions.Devices' order; their VRAM adds up to VRAM.
	Devices []DeviceEstimate
	// Problem is why the choice cannot be placed as asked ("2 KV heads
	// cannot be shared by 3 devices"); "" when it can.
	Problem string
}

// DeviceEstimate is one device's part of a load: what it holds and the
// bytes that takes.
type DeviceEstimate struct {
	ID    string
	Where string // "12 blocks (16–27) + head", "28 blocks (0–27) · 4 of 8 KV heads, 1/2 of the FFN"
	// Weights and KV are its part of the model's weights and KV cache
	// (the parts of every device add up to one device's); Buffers are its
	// compute buffers and runtime overhead, which every device holding a
	// block has. VRAM is the sum.
	Weights, KV, Buffers, VRAM uint64
}

// Library finds, describes and loads models.
type Library interface {
	// Models lists the local model files, described from their headers.
	Models() ([]ModelInfo, error)
	// Describe reads the header of a model file the user picked.
	Describe(path string) (ModelInfo, error)
	// Load loads a model; it is slow and runs off the UI goroutine.
	Load(ctx context.Context, path string, o LoadOptions) (Engine, error)
	GPU() GPUStatus
	Choices() LoadChoices
	Estimate(m ModelInfo, o LoadOptions) MemoryEstimate
	// ValidateSampling reports settings outside the engine's ranges.
	ValidateSampling(p presets.Params) error
	// MemoryInUse is the process's resident memory in bytes.
	MemoryInUse() uint64
	// MaxThreads is the number of cores.
	MaxThreads() int
}

// Storage keeps conversations and settings (app/store.Files).
type Storage interface {
	LoadAll() ([]*store.Conversation, error)
	SaveAsync(c *store.Conversation, then func())
	DeleteAsync(id string)
	// BeginReply journals reply m of conversation c; c needs only its ID,
	// title and the message m answers.
	BeginReply(c *store.Conversation, m store.Message) (*store.Journal, error)
	LoadSettings() (store.Settings, error)
	SaveSettingsAsync(s store.Settings)
	Flush()
}
