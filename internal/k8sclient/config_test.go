package k8sclient

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckLooksAtShapeOnly(t *testing.T) {
	for _, c := range []APIConfig{
		{AuthType: AuthServiceAccount},
		{AuthType: AuthKubeConfig},
		{AuthType: AuthKubeConfig, KubeConfig: "/etc/accelsim/kubeconfig", Context: "sim"},
		{AuthType: AuthNone, QPS: 20, Burst: 40},
		// Files are named, not opened: they may be mounted after the config is read.
		{AuthType: AuthTLS, CertFile: "/nonexistent/client.crt", KeyFile: "/nonexistent/client.key"},
	} {
		assert.NoError(t, c.Check(), "%+v", c)
	}

	for _, tc := range []struct {
		c    APIConfig
		want string
	}{
		{APIConfig{}, "auth_type is empty: use serviceAccount, kubeConfig, none or tls"},
		{APIConfig{AuthType: "token"}, `auth_type "token" is not one of serviceAccount, kubeConfig, none or tls`},
		{APIConfig{AuthType: "serviceaccount"}, "is not one of"}, // case matters, as in contrib
		{APIConfig{AuthType: AuthTLS, CertFile: "c.crt"}, "auth_type tls needs cert_file and key_file"},
		{APIConfig{AuthType: AuthServiceAccount, CAFile: "ca.crt"}, "read only with auth_type tls"},
		{APIConfig{AuthType: AuthServiceAccount, KubeConfig: "/root/.kube/config"}, "read only with auth_type kubeConfig"},
		{APIConfig{AuthType: AuthNone, QPS: -1}, "must not be negative"},
	} {
		assert.ErrorContains(t, tc.c.Check(), tc.want, "%+v", tc.c)
	}
}
