package cwlogstest

import (
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// AssumedAccessKey is the access key id the fake STS hands out.
const AssumedAccessKey = "ASIAFAKEASSUMEDROLE1"

// assumedSecret is the secret key that goes with AssumedAccessKey.
const assumedSecret = "fakeSecretFromAssumedRole"

// assumeRole answers STS AssumeRole (query protocol, XML), so a test can
// tell from AccessKeys that CloudWatch Logs calls were signed with the
// assumed role's credentials.
func (s *Server) assumeRole(w http.ResponseWriter, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	role := form.Get("RoleArn")
	s.assumed = append(s.assumed, role)
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <Credentials>
      <AccessKeyId>%s</AccessKeyId>
      <SecretAccessKey>%s</SecretAccessKey>
      <SessionToken>fakeSessionToken</SessionToken>
      <Expiration>%s</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <Arn>%s/%s</Arn>
      <AssumedRoleId>AROAFAKE:%s</AssumedRoleId>
    </AssumedRoleUser>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleResponse>`, AssumedAccessKey, assumedSecret, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), role, form.Get("RoleSessionName"), form.Get("RoleSessionName"))
}
