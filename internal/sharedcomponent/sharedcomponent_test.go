package sharedcomponent

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
)

type counting struct {
	starts, shutdowns int
	startErr          error
}

func (c *counting) Start(context.Context, component.Host) error { c.starts++; return c.startErr }
func (c *counting) Shutdown(context.Context) error              { c.shutdowns++; return nil }

func TestOneInstancePerIDStartedAndStoppedOnce(t *testing.T) {
	m := NewMap[*counting]()
	id := component.MustNewID("dcgm")
	created := 0
	create := func() (*counting, error) { created++; return &counting{}, nil }

	a, err := m.LoadOrStore(id, create)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.LoadOrStore(id, create)
	other, _ := m.LoadOrStore(component.MustNewIDWithName("dcgm", "second"), create)
	if a != b || a == other || created != 2 {
		t.Fatalf("want one instance per ID: same=%v distinct=%v created=%d", a == b, a != other, created)
	}
	host := componenttest.NewNopHost()
	for _, c := range []*Component[*counting]{a, b} {
		if err := c.Start(context.Background(), host); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*Component[*counting]{a, b} {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if v := a.Unwrap(); v.starts != 1 || v.shutdowns != 1 {
		t.Fatalf("starts=%d shutdowns=%d, want 1 and 1", v.starts, v.shutdowns)
	}
	// After shutdown the ID is free again (configuration reload).
	c, _ := m.LoadOrStore(id, create)
	if c == a || created != 3 {
		t.Fatal("a shut-down instance must not be reused")
	}
}

func TestStartErrorIsReturnedToEveryPipeline(t *testing.T) {
	m := NewMap[*counting]()
	boom := errors.New("boom")
	c, _ := m.LoadOrStore(component.MustNewID("x"), func() (*counting, error) { return &counting{startErr: boom}, nil })
	for i := 0; i < 2; i++ {
		if err := c.Start(context.Background(), componenttest.NewNopHost()); !errors.Is(err, boom) {
			t.Fatalf("start %d: got %v", i, err)
		}
	}
}

// reporting reports a status during Start and whenever told to later.
type reporting struct {
	host component.Host
}

func (r *reporting) Start(_ context.Context, host component.Host) error {
	r.host = host
	componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(errors.New("socket missing")))
	return nil
}
func (r *reporting) Shutdown(context.Context) error { return nil }

func TestStatusReachesEveryPipeline(t *testing.T) {
	m := NewMap[*reporting]()
	c, _ := m.LoadOrStore(component.MustNewID("dcgm"), func() (*reporting, error) { return &reporting{}, nil })
	ext := map[component.ID]component.Component{component.MustNewID("file_storage"): nil}
	metrics := &componenthealthtest.Host{Extensions: ext}
	logs := &componenthealthtest.Host{}

	if err := c.Start(context.Background(), metrics); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal("a host that takes no status must not get in the way:", err)
	}
	if err := c.Start(context.Background(), logs); err != nil {
		t.Fatal(err)
	}
	inner := c.Unwrap().host
	if _, ok := inner.GetExtensions()[component.MustNewID("file_storage")]; !ok {
		t.Fatal("the instance must see the pipelines' extensions")
	}
	componentstatus.ReportStatus(inner, componentstatus.NewEvent(componentstatus.StatusOK))

	want := []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}
	for name, h := range map[string]*componenthealthtest.Host{"first": metrics, "late": logs} {
		if got := h.Statuses(); !slices.Equal(got, want) {
			t.Errorf("%s pipeline got %v, want %v (a late one first gets the last status)", name, got, want)
		}
	}
	if err := logs.Last().Err(); err != nil {
		t.Errorf("OK carries no error, got %v", err)
	}
}

func TestLateHostGetsTheLastStatusOnly(t *testing.T) {
	m := NewMap[*reporting]()
	c, _ := m.LoadOrStore(component.MustNewID("neuron"), func() (*reporting, error) { return &reporting{}, nil })
	first := &componenthealthtest.Host{}
	_ = c.Start(context.Background(), first)
	inner := c.Unwrap().host
	componentstatus.ReportStatus(inner, componentstatus.NewRecoverableErrorEvent(errors.New("exited")))
	late := &componenthealthtest.Host{}
	_ = c.Start(context.Background(), late)
	if n := len(first.Events()); n != 2 {
		t.Fatalf("first host got %d events, want 2", n)
	}
	if got := late.Events(); len(got) != 1 || got[0].Err().Error() != "exited" {
		t.Fatalf("late host got %v, want only the last status", got)
	}
}

func TestOneHostStartedTwiceHearsEachStatusOnce(t *testing.T) {
	m := NewMap[*reporting]()
	c, _ := m.LoadOrStore(component.MustNewID("neuron"), func() (*reporting, error) { return &reporting{}, nil })
	host := &componenthealthtest.Host{}
	_ = c.Start(context.Background(), host)
	_ = c.Start(context.Background(), host)
	if n := len(host.Events()); n != 1 {
		t.Fatalf("got %d events, want 1", n)
	}
}
