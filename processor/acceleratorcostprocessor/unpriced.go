package acceleratorcostprocessor

import "go.uber.org/zap"

func (p *costProcessor) warnUnpriced(id *identity) {
	key := id.hostType + "\x00" + id.region + "\x00" + id.model
	if id.hostType == "" {
		p.warn.Warn("unpriced\x00"+key, "no price for a device without an instance type: no cost metrics for it. "+
			"Set host.type (node label node.kubernetes.io/instance-type) or add a row with instance_type \"*\" "+
			"and its accelerator_model to a file in pricing.files",
			zap.String("hw.id", id.hwID), zap.String("hw.model", id.model), zap.String("k8s.node.name", id.nodeName))
		return
	}
	p.warn.Warn("unpriced\x00"+key, "no price row for this instance type: no cost metrics for its devices. "+
		"Add a row (instance_type, region, price_per_hour, accelerator_count) to a file in pricing.files",
		zap.String("host.type", id.hostType), zap.String("cloud.region", id.region),
		zap.String("hw.id", id.hwID), zap.String("hw.model", id.model))
}
