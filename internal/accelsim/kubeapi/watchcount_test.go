package kubeapi

import (
	"context"
	"testing"

	"k8s.io/client-go/informers"
)

// The server counts the watches it serves, open and started, per resource,
// so a test can tell how many watches a collector opens.
func TestServerCountsWatches(t *testing.T) {
	srv, _, kc := startAPI(t)
	cs := clientset(t, kc)
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(cs, 0)
	factory.Core().V1().Pods().Informer()
	factory.Core().V1().Pods().Informer() // the same informer: still one watch
	factory.Resource().V1().ResourceSlices().Informer()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	waitFor(t, func() bool {
		w := srv.Watches()
		return w["pods"].Open == 1 && w["resourceslices"].Open == 1
	}, "one open watch of pods and of resourceslices")
	if w := srv.Watches(); w["pods"].Started != 1 || w["nodes"].Started != 0 {
		t.Fatalf("watches = %+v, want one of pods and none of nodes", w)
	}

	cancel()
	factory.Shutdown()
	waitFor(t, func() bool { return srv.Watches()["pods"].Open == 0 && srv.Watches()["resourceslices"].Open == 0 }, "watches closed")
	if got := srv.Watches()["pods"].Started; got != 1 {
		t.Fatalf("pods watches started = %d after shutdown, want 1", got)
	}
}
