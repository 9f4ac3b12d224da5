// Package kernellog reads the kernel log for accelerator health: the NVIDIA
// driver's XID lines (every one, with the process the driver names), its
// "fallen off the bus" lines, NVSwitch SXid lines (NVLink fabric errors),
// PCIe AER errors and the Neuron driver's NEURON_HW_ERR lines. The dcgm
// and neuron receivers both use it, so a node's kernel log is read the same
// way whichever accelerator it has.
//
// Three sources, one shape (Source): /dev/kmsg (Kmsg), the systemd journal's
// kernel messages (Journal, through `journalctl -k -o json --follow`, whose
// JSON export is journald's documented interface: the journal files
// themselves are not a stable format), and a text file that is read from
// its start the first time and then followed (File: /var/log/kern.log, or a
// saved `dmesg` output). Each line carries the Position after it; Run saves
// the position of what it has handed on to a Checkpoint (the collector's
// storage extension), so a restart resumes after the last line handled:
// /dev/kmsg by its sequence numbers and the boot id (a new boot starts
// over), the journal by its cursor, a file by inode and offset. Records the
// kernel overwrote before they were read, or that a full backlog had to
// drop, are said once, with how many.
//
// Run is the reader's loop: a source goroutine sends the lines that can
// matter into a bounded backlog (never blocking on the consumer: a full
// backlog drops and counts), the loop assembles multi-line events (an XID
// and the NVRM lines that follow it, an AER error and its detail lines) and
// hands each complete event to its consumer.
package kernellog
