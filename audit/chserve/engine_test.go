package chserve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/chdb"
)

// recorder is an Engine that records the statements it is given.
type recorder struct{ queries []string }

func (r *recorder) Query(q []byte, _ string) (*chdb.Result, error) {
	r.queries = append(r.queries, string(q))
	return &chdb.Result{}, nil
}

func (r *recorder) QueryWithParams(q []byte, f string, _ map[string]string) (*chdb.Result, error) {
	return r.Query(q, f)
}

// TestSessionPrepare checks the settings bookkeeping on a shared session:
// only changes are sent, leftovers are reset to DEFAULT, values are quoted.
func TestSessionPrepare(t *testing.T) {
	rec := &recorder{}
	s := &session{eng: rec, settings: map[string]string{}, database: "default"}
	steps := []struct {
		want map[string]string
		db   string
		sent []string
	}{
		{want: map[string]string{"async_insert": "1", "max_threads": "4"}, sent: []string{"SET async_insert = '1', max_threads = '4'"}},
		{want: map[string]string{"async_insert": "1", "max_threads": "4"}, sent: nil},
		{want: map[string]string{"async_insert": "0"}, db: "otel", sent: []string{"SET async_insert = '0', max_threads = DEFAULT", "USE `otel`"}},
		{want: map[string]string{"s": "it's \\"}, db: "otel", sent: []string{`SET async_insert = DEFAULT, s = 'it\'s \\'`}},
		{want: nil, db: "", sent: []string{"SET s = DEFAULT", "USE `default`"}},
	}
	for i, st := range steps {
		rec.queries = nil
		require.NoError(t, s.prepare(st.want, st.db), i)
		assert.Equal(t, st.sent, rec.queries, "step %d", i)
	}
}
