package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
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
