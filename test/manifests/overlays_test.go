package manifests

import (
	"path"
	"strings"
	"testing"
)

// The CloudWatch overlays must give the gateway AWS credentials and actually
// load their extra config.
func TestCloudWatchOverlaysWireCredentialsAndConfig(t *testing.T) {
	for _, r := range renderAll(t) {
		if !strings.HasPrefix(r.root, "overlays/eks-cloudwatch") {
			continue
		}
		irsa := false
		for _, sa := range r.accounts {
			if sa.Annotations["eks.amazonaws.com/role-arn"] != "" {
				irsa = true
			}
		}
		if !irsa {
			t.Errorf("%s: the service account has no IRSA role annotation", r.root)
		}
		gw := r.deployments[0].Spec.Template.Spec
		c, _ := findContainer(gw, "otelcol-accel")
		files := configArgs(c)
		if len(files) == 0 {
			t.Fatalf("%s: the gateway loads no config", r.root)
		}
		overlay := path.Base(files[len(files)-1])
		if _, ok := r.configMaps["otelcol-accel-gateway"].Data[overlay]; !ok {
			t.Errorf("%s: %s is not in the gateway ConfigMap", r.root, overlay)
		}
		if containerEnv(c)["AWS_REGION"] == "" {
			t.Errorf("%s: AWS_REGION is not set", r.root)
		}
	}
}

func TestPrometheusOverlayAnnotatesTheGatewayForScraping(t *testing.T) {
	for _, r := range renderAll(t) {
		if r.root != "overlays/prometheus" {
			continue
		}
		for _, svc := range r.services {
			if svc.Annotations["prometheus.io/scrape"] != "true" || svc.Annotations["prometheus.io/port"] != "8889" {
				t.Errorf("service %s is not annotated for scraping on 8889", svc.Name)
			}
		}
	}
}
