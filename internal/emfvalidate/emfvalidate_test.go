package emfvalidate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const valid = `{"_aws":{"Timestamp":1772366400000,"CloudWatchMetrics":[{"Namespace":"NS","Dimensions":[["Node"],[]],"Metrics":[{"Name":"m","Unit":"Seconds","StorageResolution":1},{"Name":"h"}]}]},"Node":"n1","m":1.5,"h":{"Values":[1,2],"Counts":[3,1],"Min":0.5,"Max":2,"Count":4,"Sum":5}}`

func TestValidDocument(t *testing.T) {
	doc, err := Event([]byte(valid), 0)
	require.NoError(t, err)
	assert.Equal(t, int64(1772366400000), doc.Timestamp)
	assert.Len(t, doc.Metrics, 2)
	assert.Equal(t, "None", doc.Metrics[1].Unit, "Unit defaults to None")
}

// Every rule must be able to fail, or the fake server would wave bad events
// through.
func TestEveryRuleCanFail(t *testing.T) {
	replace := func(from, to string) string {
		require.Contains(t, valid, from)
		return strings.Replace(valid, from, to, 1)
	}
	cases := map[string]string{
		"not JSON":                   `{"_aws":`,
		"trailing data":              valid + ` {}`,
		"root not object":            `[1]`,
		"no _aws":                    `{"m":1}`,
		"timestamp missing":          replace(`"Timestamp":1772366400000,`, ``),
		"timestamp fractional":       replace(`1772366400000`, `1772366400000.5`),
		"namespace empty":            replace(`"Namespace":"NS"`, `"Namespace":""`),
		"no dimension sets":          replace(`"Dimensions":[["Node"],[]]`, `"Dimensions":[]`),
		"dimension without member":   replace(`["Node"]`, `["Pod"]`),
		"dimension value empty":      replace(`"Node":"n1"`, `"Node":""`),
		"dimension value not string": replace(`"Node":"n1"`, `"Node":7`),
		"dimension repeated":         replace(`["Node"]`, `["Node","Node"]`),
		"metric without member":      replace(`{"Name":"h"}`, `{"Name":"x"}`),
		"bad unit":                   replace(`"Unit":"Seconds"`, `"Unit":"Watts"`),
		"bad resolution":             replace(`"StorageResolution":1`, `"StorageResolution":5`),
		"metric defined twice":       replace(`{"Name":"h"}`, `{"Name":"m"}`),
		"value is a string":          replace(`"m":1.5`, `"m":"1.5"`),
		"counts length":              replace(`"Counts":[3,1]`, `"Counts":[3]`),
		"count disagrees":            replace(`"Count":4`, `"Count":5`),
		"value outside min max":      replace(`"Max":2`, `"Max":1.5`),
		"value repeated":             replace(`"Values":[1,2]`, `"Values":[2,2]`),
		"zero count":                 replace(`"Counts":[3,1]`, `"Counts":[4,0]`),
		"missing Sum":                replace(`,"Sum":5`, ``),
		"duplicate root key":         replace(`"m":1.5`, `"m":1.5,"m":2`),
		"too many dimensions":        replace(`["Node"]`, `["`+strings.Repeat(`Node","`, 30)+`Node"]`),
		"huge value":                 replace(`"m":1.5`, `"m":1e200`),
	}
	for name, doc := range cases {
		_, err := Event([]byte(doc), 0)
		assert.Error(t, err, name)
	}
	var metrics []string
	for i := 0; i < 101; i++ {
		metrics = append(metrics, `{"Name":"m"}`)
	}
	_, err := Event([]byte(replace(`{"Name":"m","Unit":"Seconds","StorageResolution":1},{"Name":"h"}`, strings.Join(metrics, ","))), 0)
	assert.ErrorContains(t, err, "101 metrics")
	_, err = Event([]byte(valid), 100)
	assert.ErrorContains(t, err, "more than 100")
}
