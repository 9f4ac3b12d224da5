package e2etest

// AWSTestEnv is the environment that gives the AWS SDK in the collector
// static test credentials (the standard AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY) and region, and keeps it from reading the
// machine's own AWS configuration or instance metadata. The loopback fakes
// of AWS endpoints verify signatures made with TestAccessKeyID and
// TestSecretAccessKey.
func AWSTestEnv(region string) []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + TestAccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + TestSecretAccessKey,
		"AWS_SESSION_TOKEN=",
		"AWS_REGION=" + region,
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// The static credentials AWSTestEnv gives the collector.
const (
	TestAccessKeyID     = "AKIAE2ETESTEXAMPLE00"
	TestSecretAccessKey = "e2etestSecretKeyNotARealOne0000000000000"
)
