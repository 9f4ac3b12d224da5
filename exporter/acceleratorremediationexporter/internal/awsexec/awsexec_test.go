package awsexec

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// fakeAWS speaks the three protocols the executors' SDK clients use: EC2's
// and Auto Scaling's Query protocols (form-encoded Action, XML answers) and
// ECS's JSON 1.1 (X-Amz-Target). It keeps the state those calls change.
type fakeAWS struct {
	mu        sync.Mutex
	instances map[string]string // id → state
	rebooted  []string
	health    map[string]string
	container map[string]string // container instance ARN → status
	ec2ByArn  map[string]string
	unsigned  int
}

func newFake() *fakeAWS {
	return &fakeAWS{
		instances: map[string]string{"i-0abc": "running", "i-0def": "running"},
		health:    map[string]string{},
		container: map[string]string{"arn:aws:ecs:us-east-1:123456789012:container-instance/gpu/1111": "ACTIVE"},
		ec2ByArn:  map[string]string{"arn:aws:ecs:us-east-1:123456789012:container-instance/gpu/1111": "i-0abc"},
	}
}

func (f *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		f.unsigned++
	}
	body, _ := io.ReadAll(r.Body)
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		f.ecs(w, strings.TrimPrefix(target, "AmazonEC2ContainerServiceV20141113."), body)
		return
	}
	form, _ := url.ParseQuery(string(body))
	switch form.Get("Action") {
	case "RebootInstances":
		id := form.Get("InstanceId.1")
		if _, ok := f.instances[id]; !ok {
			queryError(w, "Response", "InvalidInstanceID.NotFound", "The instance ID '"+id+"' does not exist")
			return
		}
		if form.Get("DryRun") == "true" {
			queryError(w, "Response", "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
			return
		}
		f.rebooted = append(f.rebooted, id)
		fmt.Fprint(w, `<RebootInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-1</requestId><return>true</return></RebootInstancesResponse>`)
	case "SetInstanceHealth":
		id := form.Get("InstanceId")
		if _, ok := f.instances[id]; !ok {
			queryError(w, "ErrorResponse", "ValidationError", "Instance Id not found - No managed instance found for instance ID "+id)
			return
		}
		f.health[id] = form.Get("HealthStatus") + "/respect=" + form.Get("ShouldRespectGracePeriod")
		fmt.Fprint(w, `<SetInstanceHealthResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><ResponseMetadata><RequestId>r-2</RequestId></ResponseMetadata></SetInstanceHealthResponse>`)
	default:
		queryError(w, "Response", "InvalidAction", "unknown action "+form.Get("Action"))
	}
}

func queryError(w http.ResponseWriter, root, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusBadRequest)
	if root == "ErrorResponse" { // Auto Scaling's shape
		fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>r</RequestId></ErrorResponse>`, code, msg)
		return
	}
	fmt.Fprintf(w, `<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>r</RequestID></Response>`, code, msg)
}

func (f *fakeAWS) ecs(w http.ResponseWriter, op string, body []byte) {
	var in map[string]any
	_ = json.Unmarshal(body, &in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch op {
	case "ListContainerInstances":
		want := strings.TrimSpace(strings.TrimPrefix(fmt.Sprint(in["filter"]), "ec2InstanceId =="))
		arns := []string{}
		for arn, id := range f.ec2ByArn {
			if id == want {
				arns = append(arns, arn)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"containerInstanceArns": arns})
	case "UpdateContainerInstancesState":
		var out []map[string]any
		for _, a := range in["containerInstances"].([]any) {
			arn := a.(string)
			f.container[arn] = fmt.Sprint(in["status"])
			out = append(out, map[string]any{"containerInstanceArn": arn, "ec2InstanceId": f.ec2ByArn[arn], "status": f.container[arn]})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"containerInstances": out, "failures": []any{}})
	default:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"InvalidParameterException","message":"unknown operation %s"}`, op)
	}
}

func clients(t *testing.T) (*fakeAWS, aws.Config, string) {
	f := newFake()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}
	return f, cfg, srv.URL
}

func planFor(t *testing.T, action string, s plan.Subject) *plan.Plan {
	t.Helper()
	rp, ok := xid.PlanFor(xid.Classification{Action: action, FailureMode: "hardware"})
	require.True(t, ok)
	return plan.New(rp, s, plan.Evidence{}, time.Now())
}

func TestRebootThroughTheEC2Protocol(t *testing.T) {
	f, cfg, endpoint := clients(t)
	r := Reboot{Client: ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = &endpoint })}
	p := planFor(t, "reboot_node", plan.Subject{InstanceID: "i-0abc"})
	ok, _ := r.Applies(p.Subject)
	require.True(t, ok)
	assert.False(t, r.Idempotent(), "a reboot is never run twice")

	out, err := r.Run(context.Background(), p, true)
	require.NoError(t, err)
	assert.Contains(t, out.Detail, "dry run")
	assert.Empty(t, f.rebooted, "a dry run reboots nothing")

	out, err = r.Run(context.Background(), p, false)
	require.NoError(t, err)
	assert.Equal(t, "EC2 instance i-0abc rebooting", out.Detail)
	assert.Equal(t, []string{"i-0abc"}, f.rebooted)

	_, err = r.Run(context.Background(), planFor(t, "reboot_node", plan.Subject{InstanceID: "i-0missing"}), false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "InvalidInstanceID.NotFound")

	ok, why := r.Applies(plan.Subject{Node: "n1"})
	assert.False(t, ok)
	assert.Contains(t, why, "not an EC2 instance")
	assert.Zero(t, f.unsigned, "every request is SigV4-signed")
}

func TestMarkUnhealthyThroughTheAutoScalingProtocol(t *testing.T) {
	f, cfg, endpoint := clients(t)
	m := MarkUnhealthy{Client: autoscaling.NewFromConfig(cfg, func(o *autoscaling.Options) { o.BaseEndpoint = &endpoint })}
	p := planFor(t, "replace_device", plan.Subject{InstanceID: "i-0def"})
	_, err := m.Run(context.Background(), p, false)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"i-0def": "Unhealthy/respect=false"}, f.health)

	_, err = m.Run(context.Background(), planFor(t, "replace_device", plan.Subject{InstanceID: "i-0nope"}), false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ValidationError")
}

func TestDrainECSContainerInstance(t *testing.T) {
	f, cfg, endpoint := clients(t)
	d := DrainECS{Client: ecs.NewFromConfig(cfg, func(o *ecs.Options) { o.BaseEndpoint = &endpoint })}
	cluster := "arn:aws:ecs:us-east-1:123456789012:cluster/gpu"
	p := planFor(t, "restart_service", plan.Subject{InstanceID: "i-0abc", ECSCluster: cluster})
	ok, _ := d.Applies(p.Subject)
	require.True(t, ok)
	out, err := d.Run(context.Background(), p, false)
	require.NoError(t, err)
	assert.Contains(t, out.Detail, "container-instance/gpu/1111 DRAINING")
	assert.Equal(t, "DRAINING", f.container["arn:aws:ecs:us-east-1:123456789012:container-instance/gpu/1111"])

	out, err = d.Run(context.Background(), planFor(t, "restart_service", plan.Subject{InstanceID: "i-0def", ECSCluster: cluster}), false)
	require.NoError(t, err)
	assert.True(t, out.Skipped, "no container instance for that EC2 instance")

	ok, why := d.Applies(plan.Subject{InstanceID: "i-0abc"})
	assert.False(t, ok)
	assert.Contains(t, why, "not in an ECS cluster")
}
