package acceleratorattributesprocessor

import "go.uber.org/zap"

// reporter is the report callback of one source (sourceEnv.report): the
// processor's status names every broken source and its fix
// (componenthealth.Problems), and the log says so at once when a problem is
// new or different, then at most every logInterval, and once when the
// source works again.
func (p *attributesProcessor) reporter(source string) func(error) {
	key := "problem/" + source
	return func(err error) {
		if err == nil {
			if p.problems.Clear(source) {
				p.rl.Reset(key)
				p.logger.Info("accelerator_attributes: " + source + " works again")
			}
			return
		}
		if p.problems.Fail(source, err) {
			p.rl.Reset(key)
		}
		// A warning, not an error: the pipeline keeps flowing and the status
		// says the same; an error-level line would also carry a stack trace.
		p.rl.Warn(key, "accelerator_attributes: "+source+" unavailable, attribution degraded", zap.String("fix", err.Error()))
	}
}
