package senderauth

import "context"

type checkedKey struct{}

// WithChecked marks ctx: everything passed on with it went through the
// sender check (processor/acceleratorsenderprocessor), which removed what
// its sender may not speak for. The mark lives only inside the process:
// no sender can set it, and it is lost where data is queued or batched
// (the context of a batch is not the sender's), so a consumer that
// requires it fails closed when something stands between it and the check.
func WithChecked(ctx context.Context) context.Context {
	return context.WithValue(ctx, checkedKey{}, true)
}

// Checked reports whether ctx carries the sender check's mark.
func Checked(ctx context.Context) bool {
	ok, _ := ctx.Value(checkedKey{}).(bool)
	return ok
}
