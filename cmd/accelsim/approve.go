package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
)

// approvePrefix is accelerator_remediation's default annotation_prefix.
const approvePrefix = accelschema.RemediationAnnotationPrefix

// approve is what `kubectl annotate node NODE PREFIX/approve=PLAN` does,
// for a demo without kubectl: a merge patch of the node's annotation
// through the simulated API server, under a field manager the remediator
// records as the approver.
func approve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("approve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	plan := fs.String("plan", "", "the plan id (rp-…), from the gateway's log or the console (required)")
	node := fs.String("node", "", "the plan's node (required)")
	stateDir := fs.String("state-dir", "", "accelsim serve's --state-dir (its endpoints.json names the kubeconfig)")
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig (default: the one in --state-dir)")
	manager := fs.String("field-manager", "accelsim-approve", "who approves, as the API server records it")
	prefix := fs.String("prefix", approvePrefix, "accelerator_remediation's annotation_prefix")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *plan == "" || *node == "" || (*stateDir == "" && *kubeconfig == "") {
		fmt.Fprintln(stderr, "accelsim approve: --plan, --node and --state-dir (or --kubeconfig) are required")
		return exitUsage
	}
	if *kubeconfig == "" {
		f, err := endpoints.Read(filepath.Join(*stateDir, endpoints.FileName))
		if err != nil {
			fmt.Fprintln(stderr, "accelsim approve:", err)
			return exitUsage
		}
		*kubeconfig = f.Kubeconfig
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "accelsim approve: kubeconfig %s: %v\n", *kubeconfig, err)
		return exitUsage
	}
	cfg.UserAgent = "accelsim-approve"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "accelsim approve:", err)
		return exitError
	}
	key := strings.TrimSuffix(*prefix, "/") + "/approve"
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: *plan}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.CoreV1().Nodes().Patch(ctx, *node, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: *manager}); err != nil {
		fmt.Fprintf(stderr, "accelsim approve: node %s: %v\n", *node, err)
		return exitError
	}
	fmt.Fprintf(stdout, "node/%s annotated %s=%s (by %s): the remediator acts on its next tick\n", *node, key, *plan, *manager)
	return exitOK
}
