package k8sclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// resync re-delivers the cached objects to the handlers now and then, a
// guard against a missed event; it costs no API request.
const resync = 10 * time.Minute

// Providers build what a Registry runs. Tests replace them to run the
// components' own code against another API (client-go's fake clientset, a
// client that fails); the simulator's API needs no replacement, only a
// kubeconfig.
type Providers struct {
	// NewClient builds the client of one API config; nil is NewClient.
	NewClient func(APIConfig) (Client, error)
	// Informers replace DefaultInformers' provider of their kinds.
	Informers map[Kind]InformerProvider
	// NewDynamic builds the dynamic client of the custom resources
	// (LeaderWorkerSets, NodeClaims); nil is the client's own
	// (RESTClient.Dynamic: one transport and rate limiter for both), or
	// NewDynamicClient for a client of another kind. It is built only
	// when a component asks for one of them.
	NewDynamic func(APIConfig) (dynamic.Interface, error)
}

// Registry hands out the informers of a node, one set per API config and
// node name, shared by every component that asks for them and stopped when
// the last of them lets go.
type Registry struct {
	newClient  func(APIConfig) (Client, error)
	newDynamic func(APIConfig) (dynamic.Interface, error)
	informers  map[Kind]InformerProvider

	mu     sync.Mutex
	shared map[key]*sharedInformers
}

type key struct {
	api      APIConfig
	nodeName string
}

// NewRegistry makes a registry of its own, for tests; components use Shared.
func NewRegistry(p Providers) *Registry {
	r := &Registry{newClient: p.NewClient, newDynamic: p.NewDynamic, informers: DefaultInformers(), shared: map[key]*sharedInformers{}}
	if r.newClient == nil {
		r.newClient = func(c APIConfig) (Client, error) { return NewClient(c) }
	}
	maps.Copy(r.informers, p.Informers)
	return r
}

var process = NewRegistry(Providers{})

// Shared is the registry of the process: components that reach the API
// with the same config on the same node get the same informers from it, so
// the API server sees one watch per kind per agent.
func Shared() *Registry { return process }

// Acquire holds the informers of nodeName (every node when empty, which
// only tests want) reached as api says, building the client on first use.
// Call Release when done, typically in Shutdown.
func (r *Registry) Acquire(api APIConfig, nodeName string) (*Informers, error) {
	k := key{api: api, nodeName: nodeName}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.shared[k]
	if s == nil {
		client, err := r.newClient(api)
		if err != nil {
			return nil, err
		}
		s = newSharedInformers(client, nodeName, r.informers)
		s.newDynamic = func() (dynamic.Interface, error) {
			if r.newDynamic != nil {
				return r.newDynamic(api)
			}
			if rc, ok := client.(*RESTClient); ok {
				return rc.Dynamic()
			}
			return NewDynamicClient(api)
		}
		r.shared[k] = s
	}
	s.holders++
	return &Informers{registry: r, key: k, shared: s}, nil
}

// Holders says how many holds are open on the informers of api and nodeName.
func (r *Registry) Holders(api APIConfig, nodeName string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.shared[key{api: api, nodeName: nodeName}]; s != nil {
		return s.holders
	}
	return 0
}

func (r *Registry) release(k key, s *sharedInformers) {
	r.mu.Lock()
	s.holders--
	last := s.holders == 0
	if last {
		delete(r.shared, k)
	}
	r.mu.Unlock()
	if last {
		s.stop()
	}
}

// sharedInformers are the running informers of one key.
type sharedInformers struct {
	client    Client
	nodeName  string
	providers map[Kind]InformerProvider
	holders   int // guarded by Registry.mu
	// newDynamic builds dyn on the first custom-resource informer.
	newDynamic func() (dynamic.Interface, error)
	dyn        dynamic.Interface // guarded by mu

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[Kind]*watchErrors
}

func newSharedInformers(client Client, nodeName string, providers map[Kind]InformerProvider) *sharedInformers {
	ctx, cancel := context.WithCancel(context.Background())
	return &sharedInformers{client: client, nodeName: nodeName, providers: providers, ctx: ctx, cancel: cancel, running: map[Kind]*watchErrors{}}
}

// informer returns the running informer of kind, starting it on first use.
func (s *sharedInformers) informer(kind Kind) (*watchErrors, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.running[kind]; ok {
		return w, nil
	}
	var inf cache.SharedIndexInformer
	if provide := s.providers[kind]; provide != nil {
		inf = provide(s.client, s.nodeName, resync)
	} else if dynamicKinds[kind] {
		if s.dyn == nil {
			dyn, err := s.newDynamic()
			if err != nil {
				return nil, fmt.Errorf("informer for %s: %w", kind, err)
			}
			s.dyn = dyn
		}
		inf = dynamicInformer(s.dyn, OptionalKinds[kind], resync)
	} else {
		return nil, fmt.Errorf("no informer for %q", kind)
	}
	w := &watchErrors{kind: kind, informer: inf}
	if err := inf.SetTransform(slim); err != nil {
		return nil, fmt.Errorf("informer for %s: %w", kind, err)
	}
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { w.record(err) }); err != nil {
		return nil, fmt.Errorf("informer for %s: %w", kind, err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		inf.RunWithContext(s.ctx)
	}()
	s.running[kind] = w
	return w, nil
}

func (s *sharedInformers) stop() {
	s.cancel()
	s.wg.Wait()
}

var errReleased = errors.New("the Kubernetes informers were released")

// Informers is one component's hold on the shared informers of its node.
type Informers struct {
	registry *Registry
	key      key
	shared   *sharedInformers

	mu       sync.Mutex
	released bool
	kinds    []*watchErrors // asked for, in order
	handlers []handler
	// ctx ends the optional kinds' discovery loops (WatchOptional) at
	// Release; made on first use.
	ctx    context.Context
	cancel context.CancelFunc
}

type handler struct {
	informer     cache.SharedIndexInformer
	registration cache.ResourceEventHandlerRegistration
}

// Client is the API client the informers use, for the odd request of one's
// own (discovery of served API groups).
func (i *Informers) Client() Client { return i.shared.client }

// NodeName is the node the informers are limited to.
func (i *Informers) NodeName() string { return i.shared.nodeName }

// Informer returns the shared informer of kind, running, starting it if no
// component asked for it before. It does not wait for the first list. Its
// objects belong to every component: read them, never change them; add
// handlers with AddEventHandler, so that Release removes them.
func (i *Informers) Informer(kind Kind) (cache.SharedIndexInformer, error) {
	w, err := i.watch(kind)
	if err != nil {
		return nil, err
	}
	return w.informer, nil
}

func (i *Informers) watch(kind Kind) (*watchErrors, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.released {
		return nil, errReleased
	}
	for _, w := range i.kinds {
		if w.kind == kind {
			return w, nil
		}
	}
	w, err := i.shared.informer(kind)
	if err != nil {
		return nil, err
	}
	i.kinds = append(i.kinds, w)
	return w, nil
}

// AddEventHandler calls h on every change of kind until Release.
func (i *Informers) AddEventHandler(kind Kind, h cache.ResourceEventHandler) error {
	inf, err := i.Informer(kind)
	if err != nil {
		return err
	}
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		return fmt.Errorf("event handler on %s: %w", kind, err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.released {
		_ = inf.RemoveEventHandler(reg)
		return errReleased
	}
	i.handlers = append(i.handlers, handler{informer: inf, registration: reg})
	return nil
}

// Synced reports whether every kind this component asked for has listed once.
func (i *Informers) Synced() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, w := range i.kinds {
		if !w.informer.HasSynced() {
			return false
		}
	}
	return true
}

// Problems lists the watches of this component's kinds that fail now.
func (i *Informers) Problems() []Problem {
	i.mu.Lock()
	kinds := i.kinds
	i.mu.Unlock()
	var out []Problem
	for _, w := range kinds {
		if p, ok := w.problem(); ok {
			out = append(out, p)
		}
	}
	return out
}

// Release removes this component's handlers and lets go of the informers;
// the last component to let go stops them (and waits for them to end).
// Calling it again does nothing.
func (i *Informers) Release() {
	i.mu.Lock()
	if i.released {
		i.mu.Unlock()
		return
	}
	i.released = true
	handlers := i.handlers
	i.handlers = nil
	if i.cancel != nil {
		i.cancel()
	}
	i.mu.Unlock()
	for _, h := range handlers {
		_ = h.informer.RemoveEventHandler(h.registration)
	}
	i.registry.release(i.key, i.shared)
}
