/* SPDX-License-Identifier: MIT */
/*
 * Names and argument lists of QNX 6.4 trace events: kernel calls (entry and exit, wide
 * and fast), thread states, SYSTEM and COMM events. These are the facts of the QNX SAT
 * "Kernel call arguments and return values" appendix and of traceprinter 1.02's output;
 * kev_format.c turns them into text.
 */
#include <libaudit.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>

#include "kev/kev_names.h"

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define EMPTY2 ARGS("fHempty", "fHempty")
#define RET_EMPTY ARGS("fHret_val", "fHempty")
#define DRET_EMPTY ARGS("fDret_val", "fHempty")
#define SPARE(n) { n, NULL, EMPTY2, EMPTY2 }

#define SIGEVENT_ARGS(first)                                                            \
	ARGS(first, "fDevent->sigev_notify", "Pevent->sigev_notify_function_p",         \
	     "Hevent->sigev_value", "Pevent->sigev_notify_attributes_p")
#define MSGINFO_ARGS(first)                                                             \
	ARGS(first, "fSrmsg", "s", "s", "Dinfo->nd", "Dinfo->srcnd", "Dinfo->pid",      \
	     "Dinfo->tid", "Dinfo->chid", "Dinfo->scoid", "Dinfo->coid", "Dinfo->msglen", \
	     "Dinfo->srcmsglen", "Dinfo->dstmsglen", "Dinfo->priority", "Dinfo->flags",   \
	     "Dinfo->reserved")
#define CRED_ARGS(first, flags)                                                         \
	ARGS(first, "fDinfo->nd", "Dinfo->pid", "Dinfo->sid", flags, "Dinfo->ruid",    \
	     "Dinfo->euid", "Dinfo->suid", "Dinfo->rgid", "Dinfo->egid", "Dinfo->sgid",   \
	     "Dinfo->ngroups", "Dinfo->grouplist[0]", "Dinfo->grouplist[1]",              \
	     "Dinfo->grouplist[2]", "Dinfo->grouplist[3]", "Dinfo->grouplist[4]",         \
	     "Dinfo->grouplist[5]", "Dinfo->grouplist[6]", "Dinfo->grouplist[7]")
#define SCHED_PARAM_ARGS                                                                \
	"Dparam.__ss_low_priority", "Dparam.__ss_max_repl",                              \
		"Dparam.__ss_repl_period.tv_sec", "Dparam.__ss_repl_period.tv_nsec",    \
		"Dparam.__ss_init_budget.tv_sec", "Dparam.__ss_init_budget.tv_nsec",    \
		"Dparam.empty", "Dparam.empty"
#define ITIME_ARGS(p, first)                                                            \
	ARGS(first, "fD" p "->nsec(sec)", "D" p "->nsec(nsec)", "D" p "->interval_nsec(sec)", \
	     "D" p "->interval_nsec(nsec)")
#define SYNC3 ARGS("fPsync_p", "Dcount", "fDowner")
#define SENDV_ARGS                                                                      \
	ARGS("fHcoid", "fHrcvid", "fDpid", "fSmsg", "s", "s", "Dsparts", "Drparts")

const struct tk__kercall_desc tk__kercalls[] = {
	{ "NOP", NULL, ARGS("fHdummy", "fHempty"), EMPTY2 },
	{ "TRACE_EVENT", NULL,
	  ARGS("fHmode", "fHclass[header]", "Hevent[time_off]", "Hdata_1", "Hdata_2"), RET_EMPTY },
	{ "RING0", NULL, ARGS("fPfunc_p", "fParg_p"), RET_EMPTY },
	SPARE("SPARE1"),
	SPARE("SPARE2"),
	SPARE("SPARE3"),
	SPARE("SPARE4"),
	{ "SYS_CPUPAGE_GET", NULL, ARGS("fDindex", "fHempty"), RET_EMPTY },
	{ "SYS_CPUPAGE_SET", NULL, ARGS("fDindex", "fHvalue"), RET_EMPTY },
	SPARE("SYS_SPARE1"),
	{ "MSG_CURRENT", NULL, ARGS("fHrcvid", "fHempty"), EMPTY2 },
	{ "MSG_SENDV", NULL, SENDV_ARGS, ARGS("fDstatus", "fSrmsg", "s", "s") },
	{ "MSG_SENDVNC", NULL, SENDV_ARGS, ARGS("fDstatus", "fSrmsg", "s", "s") },
	{ "MSG_ERROR", NULL, ARGS("fHrcvid", "fDerr"), DRET_EMPTY },
	{ "MSG_RECEIVEV", NULL, ARGS("fHchid", "fDrparts"), MSGINFO_ARGS("fHrcvid") },
	{ "MSG_REPLYV", NULL, ARGS("fHrcvid", "Dsparts", "fHstatus", "Ssmsg", "s", "s"), DRET_EMPTY },
	{ "MSG_READV", NULL, ARGS("fHrcvid", "Prmsg_p", "Drparts", "fHoffset"),
	  ARGS("fDrbytes", "fSrmsg", "s", "s") },
	{ "MSG_WRITEV", NULL, ARGS("fHrcvid", "Dsparts", "fHoffset", "Smsg", "s", "s"),
	  ARGS("fDwbytes", "fHempty") },
	{ "MSG_READWRITEV", NULL, ARGS("fHsrc_rcvid", "fHdst_rcvid"), ARGS("fDmsglen", "fHempty") },
	{ "MSG_INFO", NULL, ARGS("fHrcvid", "fPinfo_p"),
	  ARGS("fHret_val", "fDinfo->nd", "Dinfo->srcnd", "Dinfo->pid", "Dinfo->tid", "Dinfo->chid",
	       "Dinfo->scoid", "Dinfo->coid", "Dinfo->msglen", "Dinfo->srcmsglen", "Dinfo->dstmsglen",
	       "Dinfo->priority", "Dinfo->flags", "Hempty") },
	{ "MSG_SEND_PULSE", NULL, ARGS("fHcoid", "Dpriority", "fHcode", "Hvalue"),
	  ARGS("fDstatus", "fHempty") },
	{ "MSG_DELIVER_EVENT", NULL, SIGEVENT_ARGS("fHrcvid"), ARGS("fHret_val", "Pevent_p", "FHempty") },
	{ "MSG_KEYDATA", NULL, ARGS("fHrcvid", "fHop"), ARGS("fHret_val", "fDnewkey") },
	{ "MSG_READIOV", NULL, ARGS("fHrcvid", "Dparts", "fHoffset", "Hflags"),
	  ARGS("fDrbytes", "fSrmsg", "s", "s") },
	{ "MSG_RECEIVEPULSEV", NULL, ARGS("fHchid", "fDrparts"), ARGS("fHret_val", "Srmsg", "s", "s", "FHempty") },
	{ "MSG_VERIFY_EVENT", NULL, SIGEVENT_ARGS("fHrcvid"), ARGS("fDstatus", "fHempty") },
	{ "SIGNAL_KILL", NULL, ARGS("Hnd", "fDpid", "Dtid", "fDsigno", "Hcode", "Hvalue"), DRET_EMPTY },
	{ "SIGNAL_RETURN", NULL, ARGS("fPs_p", "fHempty"), RET_EMPTY },
	{ "SIGNAL_FAULT", NULL, ARGS("fDsigcode", "fPaddr"),
	  ARGS("fHret_val", "fHreg_1", "Hreg_2", "Hreg_3", "Hreg_4", "Hreg_5") },
	{ "SIGNAL_ACTION", NULL,
	  ARGS("Dpid", "Psigstubs_p", "fDsigno", "fPact->sa_handler_p", "Hact->sa_flags",
	       "Hact->sa_mask.bits[0]", "Hact->sa_mask.bits[1]"),
	  ARGS("fHret_val", "fPoact->sa_handler_p", "Hoact->sa_flags", "Hoact->sa_mask.bits[0]",
	       "Hoact->sa_mask.bits[1]") },
	{ "SIGNAL_PROCMASK", NULL,
	  ARGS("fDpid", "fDtid", "Hhow", "Hsig_blocked->bits[0]", "Hsig_blocked->bits[1]"),
	  ARGS("fDret_val", "fHold_sig_blocked->bits[0]", "Hold_sig_blocked->bits[1]") },
	{ "SIGNAL_SUSPEND", NULL, ARGS("fHsig_blocked->bits[0]", "fHsig_blocked->bits[1]"),
	  ARGS("fHret_val", "fPsig_blocked_p") },
	{ "SIGNAL_WAITINFO", NULL, ARGS("fHsig_wait->bits[0]", "fHsig_wait->bits[1]"),
	  ARGS("fDsig_num", "Dsi_signo", "fDsi_code", "Dsi_errno", "Dp[0]", "Dp[1]", "Dp[2]", "Dp[3]",
	       "Dp[4]", "Dp[5]", "Dp[6]") },
	SPARE("SIGNAL_SPARE1"),
	SPARE("SIGNAL_SPARE2"),
	{ "CHANNEL_CREATE", NULL, ARGS("fHflags", "fHempty"), ARGS("fHchid", "fHempty") },
	{ "CHANNEL_DESTROY", NULL, ARGS("fHchid", "fHempty"), RET_EMPTY },
	{ "CHANCON_ATTR", NULL, ARGS("fDchid", "fHflags"), ARGS("fDchid", "fHflags") },
	SPARE("CHANNEL_SPARE1"),
	{ "CONNECT_ATTACH", NULL, ARGS("fHnd", "fDpid", "Hchid", "Dindex", "Hflags"),
	  ARGS("fHcoid", "fHempty") },
	{ "CONNECT_DETACH", NULL, ARGS("fHcoid", "fHempty"), RET_EMPTY },
	{ "CONNECT_SERVER_INFO", NULL, ARGS("fDpid", "fHcoid"),
	  ARGS("fHcoid", "fDinfo->nd", "Dinfo->srcnd", "Dinfo->pid", "Dinfo->tid", "Dinfo->chid",
	       "Dinfo->scoid", "Dinfo->coid", "Dinfo->msglen", "Dinfo->srcmsglen", "Dinfo->dstmsglen",
	       "Dinfo->priority", "Dinfo->flags", "Dinfo->reserved") },
	{ "CONNECT_CLIENT_INFO", NULL, ARGS("fHscoid", "fDngroups"), CRED_ARGS("fHret_val", "Hflags") },
	{ "CONNECT_FLAGS", NULL, ARGS("Dpid", "fHcoid", "Hmasks", "fHbits"), ARGS("fHold_flags", "fHempty") },
	SPARE("CONNECT_SPARE1"),
	SPARE("CONNECT_SPARE2"),
	{ "THREAD_CREATE", NULL,
	  ARGS("Dpid", "fPfunc_p", "fParg_p", "Hflags", "Dstacksize", "Pstackaddr_p", "Pexitfunc_p",
	       "Dpolicy", "Dsched_priority", "Dsched_curpriority", SCHED_PARAM_ARGS, "Dguardsize",
	       "Dempty", "Dempty", "Dempty"),
	  ARGS("fHthread_id", "fHowner") },
	{ "THREAD_DESTROY", NULL, ARGS("fDtid", "Dpriority", "fPstatus_p"), RET_EMPTY },
	{ "THREAD_DESTROYALL", NULL, EMPTY2, RET_EMPTY },
	{ "THREAD_DETACH", NULL, ARGS("fDtid", "fHempty"), RET_EMPTY },
	{ "THREAD_JOIN", NULL, ARGS("fDtid", "fPstatus_pp"), ARGS("fHret_val", "fPstatus_p") },
	{ "THREAD_CANCEL", NULL, ARGS("fDtid", "fPcanstub_p"), RET_EMPTY },
	{ "THREAD_CTL", NULL, ARGS("fHcmd", "fPdata_p"), RET_EMPTY },
	SPARE("THREAD_SPARE1"),
	SPARE("THREAD_SPARE2"),
	{ "INTERRUPT_ATTACH", NULL, ARGS("fDintr", "Phandler_p", "Parea_p", "Dareabase", "fHflags"),
	  ARGS("fHint_fun_id", "fHempty") },
	{ "INTERRUPT_DETACH_FUNC", NULL, ARGS("fDintr", "fPhandler_p"), DRET_EMPTY },
	{ "INTERRUPT_DETACH", NULL, ARGS("fDid", "fHempty"), DRET_EMPTY },
	{ "INTERRUPT_WAIT", NULL, ARGS("fHflags", "Dtimeout_tv_sec", "Dtimeout_tv_nsec", "FHempty"),
	  ARGS("fDret_val", "Ptimeout_p", "FHempty") },
	{ "INTERRUPT_MASK", NULL, ARGS("fDintr", "fDid"), ARGS("fHmask_level", "fHempty") },
	{ "INTERRUPT_UNMASK", NULL, ARGS("fDintr", "fDid"), ARGS("fHmask_level", "fHempty") },
	SPARE("INTERRUPT_SPARE1"),
	SPARE("INTERRUPT_SPARE2"),
	SPARE("INTERRUPT_SPARE3"),
	SPARE("INTERRUPT_SPARE4"),
	{ "CLOCK_TIME", NULL, ARGS("fDid", "fDnew(sec)", "Dnew(nsec)"),
	  ARGS("fDret_val", "Dold(sec)", "Dold(nsec)", "FDold") },
	{ "CLOCK_ADJUST", NULL, ARGS("fDid", "fDnew->tick_count", "Dnew->tick_nsec_inc"),
	  ARGS("fDret_val", "fDold->tick_count", "Dold->tick_nsec_inc") },
	{ "CLOCK_PERIOD", NULL, ARGS("fDid", "fDnew->nsec", "Dnew->fract"),
	  ARGS("fDret_val", "Dold->nsec", "Dold->fract", "FDold") },
	{ "CLOCK_ID", NULL, ARGS("fDpid", "fDtid"), RET_EMPTY },
	SPARE("CLOCK_SPARE2"),
	{ "TIMER_CREATE", NULL, SIGEVENT_ARGS("fHid"), ARGS("fHtimer_id", "fHempty") },
	{ "TIMER_DESTROY", NULL, ARGS("fHid", "fHempty"), RET_EMPTY },
	{ "TIMER_SETTIME", NULL,
	  ARGS("fHid", "Hflags", "fDitime->nsec(sec)", "Ditime->nsec(nsec)", "Ditime->interval_nsec(sec)",
	       "Ditime->interval_nsec(nsec)"),
	  ITIME_ARGS("oitime", "fHret_val") },
	{ "TIMER_INFO", NULL, ARGS("fDpid", "fHid", "Hflags", "Pinfo_p"),
	  ARGS("fDprev_id", "fDinfo->itime.nsec(sec)", "Dinfo->itime.nsec(nsec)",
	       "Dinfo->itime.interval_nsec(sec)", "Dinfo->itime.interval_nsec(nsec)",
	       "Dinfo->otime.nsec(sec)", "Dinfo->otime.nsec(nsec)", "Dinfo->otime.interval_nsec(sec)",
	       "Dinfo->otime.interval_nsec(nsec)", "Dinfo->flags", "Dinfo->tid", "Dinfo->notify",
	       "Dinfo->clockid", "Dinfo->overruns", "Dinfo->event.sigev_notify",
	       "Pinfo->event.sigev_notify_function_p", "Hinfo->event.sigev_value",
	       "Pinfo->event.sigev_notify_attributes_p") },
	{ "TIMER_ALARM", NULL, ITIME_ARGS("itime", "fHid"), ITIME_ARGS("oitime", "fHret_val") },
	{ "TIMER_TIMEOUT", NULL,
	  ARGS("Did", "fHtimeout_flags", "fDntime(sec)", "Dntime(nsec)", "Devent->sigev_notify",
	       "Pevent->sigev_notify_function_p", "Hevent->sigev_value",
	       "Pevent->sigev_notify_attributes_p"),
	  ARGS("fHprev_timeout_flags", "fDotime(sec)", "Dotime(nsec)") },
	SPARE("TIMER_SPARE1"),
	SPARE("TIMER_SPARE2"),
	{ "SYNC_CREATE", NULL,
	  ARGS("fDtype", "fPsync_p", "Dcount", "Downer", "Dprotocol", "Hflags", "Dprioceiling", "Dclockid"),
	  DRET_EMPTY },
	{ "SYNC_DESTROY", NULL, SYNC3, DRET_EMPTY },
	{ "SYNC_MUTEX_LOCK", NULL, SYNC3, DRET_EMPTY },
	{ "SYNC_MUTEX_UNLOCK", NULL, SYNC3, DRET_EMPTY },
	{ "SYNC_CONDVAR_WAIT", NULL,
	  ARGS("fPsync_p", "fPmutex_p", "Dsync->count", "Dsync->owner", "Dmutex->count", "Dmutex->owner"),
	  DRET_EMPTY },
	{ "SYNC_CONDVAR_SIGNAL", "SYNC_CONDVAR_SIG", ARGS("fPsync_p", "fDall", "Dsync->count", "Dsync->owner"),
	  DRET_EMPTY },
	{ "SYNC_SEM_POST", NULL, ARGS("fPsync_p", "fDcount", "Downer"), RET_EMPTY },
	{ "SYNC_SEM_WAIT", NULL, ARGS("fPsync_p", "Dtry", "fDcount", "Downer"), DRET_EMPTY },
	{ "SYNC_CTL", NULL, ARGS("fDcmd", "fPsync_p", "Pdata_p", "Dcount", "Downer"), DRET_EMPTY },
	{ "SYNC_MUTEX_REVIVE", NULL, SYNC3, DRET_EMPTY },
	{ "SCHED_GET", NULL, ARGS("fDpid", "fDtid"),
	  ARGS("fDret_val", "fDsched_priority", "Dsched_curpriority", SCHED_PARAM_ARGS) },
	{ "SCHED_SET", NULL,
	  ARGS("fDpid", "Dtid", "Dpolicy", "FDpriority", "Dsched_priority", "Dsched_curpriority",
	       SCHED_PARAM_ARGS),
	  DRET_EMPTY },
	{ "SCHED_YIELD", NULL, EMPTY2, RET_EMPTY },
	{ "SCHED_INFO", NULL, ARGS("fDpid", "fDpolicy"),
	  ARGS("fDret_val", "Dpriority_min", "fDpriority_max", "Dinterval_sec", "Dinterval_nsec",
	       "Dpriority_priv") },
	{ "SCHED_CTL", NULL, ARGS("fHcmd", "fHempty"), EMPTY2 },
	{ "NET_CRED", NULL, ARGS("fHcoid", "fPinfo_p"), CRED_ARGS("fDret_val", "Hinfo->flags") },
	{ "NET_VTID", NULL,
	  ARGS("fDvtid", "fPinfo_p", "Dtid", "Hcoid", "Dpriority", "Dsrcmsglen", "Hkeydata", "Dsrcnd",
	       "Ddstmsglen", "Dzero"),
	  RET_EMPTY },
	{ "NET_UNBLOCK", NULL, ARGS("fHvtid", "fHempty"), RET_EMPTY },
	{ "NET_INFOSCOID", NULL, ARGS("fHscooid", "fHempty"), RET_EMPTY },
	{ "NET_SIGNAL_KILL", NULL,
	  ARGS("Dcred->ruid", "Dcred->euid", "Hnd", "fDpid", "Dtid", "fDsigno", "Hcode", "Hvalue"),
	  ARGS("FDstatus", "Hempty", "fHempty") },
	SPARE("NET_SPARE1"),
	SPARE("NET_SPARE2"),
	{ "BAD", NULL, EMPTY2, RET_EMPTY },
};
const unsigned tk__n_kercalls = sizeof(tk__kercalls) / sizeof(tk__kercalls[0]);
_Static_assert(sizeof(tk__kercalls) / sizeof(tk__kercalls[0]) == 101, "one entry per __KER_* call");

const char *const tk__thread_states[] = {
	"THDEAD       ", "THRUNNING    ", "THREADY      ", "THSTOPPED    ", "THSEND       ",
	"THRECEIVE    ", "THREPLY      ", "THSTACK      ", "THWAITTHREAD ", "THWAITPAGE   ",
	"THSIGSUSPEND ", "THSIGWAITINFO", "THNANOSLEEP  ", "THMUTEX      ", "THCONDVAR    ",
	"THJOIN       ", "THINTR       ", "THSEM        ", "THWAITCTX    ", "THNET_SEND   ",
	"THNET_REPLY  ",
};
const unsigned tk__n_thread_states = sizeof(tk__thread_states) / sizeof(tk__thread_states[0]);

const struct tk__event_desc tk__system_events[] = {
	[2] = { "PATHMGR_OPEN   ", ARGS("fDpid", "fDtid", "Npath") },
	[3] = { "APS_NAME       ", ARGS("fDpartition_id", "fNname") },
	[4] = { "APS_NEW_BUDGET ", ARGS("fDpartition_id", "fDpercentage_budget", "Dcritical_budget") },
	[5] = { "APS_BANKRUPTCY ", ARGS("fDpid", "fDtid", "fDpartition_id") },
	[6] = { "MMAP           ",
		ARGS("fDpid", "fXvaddr", "fXlen", "fHflags", "Hprot", "Dfd", "Xalign", "Xoffset", "Npath") },
	[7] = { "MUNMAP         ", ARGS("fDpid", "fXvaddr", "fXlen") },
	[8] = { "MAPNAME        ", ARGS("fDpid", "fHvaddr", "fHlen", "Nname") },
	[9] = { "ADDRESS", ARGS("fHaddr") },
	[10] = { "FUNC_ENTER", ARGS("fHthisfn", "fHcall_site") },
	[11] = { "FUNC_EXIT", ARGS("fHthisfn", "fHcall_site") },
	[12] = { "SLOG", ARGS("fDopcode", "fDseverity", "Nmessage") },
	/* tracelogger's kernel collector (docs/collect.md): a cpu-clock sample (QNX 8's code
	 * 31) with its call chain, and the name of an interrupt handler. */
	[31] = { "PCTRACE        ",
		 ARGS("fDpid", "fDtid", "Xip", "Xcaller1", "Xcaller2", "Xcaller3", "Xcaller4", "Xcaller5",
		      "Xcaller6", "Xcaller7", "Xcaller8", "Xcaller9", "Xcaller10", "Xcaller11", "Xcaller12",
		      "Xcaller13", "Xcaller14", "Xcaller15", "Xcaller16") },
	[33] = { "IRQ_NAME       ", ARGS("fDirq", "Dreserved", "Nname") },
};
const unsigned tk__n_system_events = sizeof(tk__system_events) / sizeof(tk__system_events[0]);

const struct tk__event_desc tk__comm_events[] = {
	{ "SND_MESSAGE  ", ARGS("fHrcvid", "fDpid") },
	{ "SND_PULSE    ", ARGS("fHscoid", "fDpid") },
	{ "REC_MESSAGE  ", ARGS("fHrcvid", "fDpid") },
	{ "REC_PULSE    ", ARGS("fHscoid", "fDpid") },
	{ "SND_PULSE_EXE", ARGS("fHscoid", "fDpid") },
	{ "SND_PULSE_DIS", ARGS("fHscoid", "fDpid") },
	{ "SND_PULSE_DEA", ARGS("fHscoid", "fDpid") },
	{ "SND_PULSE_UN ", ARGS("fHscoid", "fDpid") },
	{ "SND_PULSE_QUN", ARGS("fHscoid", "fDpid") },
	{ "SIGNAL       ",
	  ARGS("fDsi_signo", "fDsi_code", "Dsi_errno", "H__pad[0]", "H__pad[1]", "H__pad[2]", "H__pad[3]",
	       "H__pad[4]", "H__pad[5]") },
	{ "REPLY_MESSAGE", ARGS("fDtid", "fDpid") },
	{ "MSG_ERROR", ARGS("fDtid", "fDpid") },
};
const unsigned tk__n_comm_events = sizeof(tk__comm_events) / sizeof(tk__comm_events[0]);

const char *tk__class_label(unsigned cls)
{
	static const char *const labels[] = { "EMPTY   ", "CONTROL ", "KER_CALL", "INT     ",
					      "PR_TH   ", "SYSTEM  ", "USREVENT", "COMM    ",
					      "QUIP    ", "SEC     ", "QVM     ", "PMU     " };

	return cls < sizeof(labels) / sizeof(labels[0]) ? labels[cls] : "CLASS   ";
}

/* ---- Linux system calls (tracelogger's KER_CALL/KER_EXIT events) ---------------------- */

/*
 * libaudit's lookup costs about as much as the rest of decoding a system call event, and a
 * trace asks for the same few dozen names millions of times: the names of numbers below
 * 1024 are kept per ABI once looked up (pointers into libaudit's static tables; NO_NAME
 * for a number it does not know). Threads that fill an entry together store the same.
 */
#define SYSCALL_CACHE 1024
static const char no_name[] = "";
static _Atomic(const char *) syscall_names[3][SYSCALL_CACHE];

const char *tk__linux_syscall_name(unsigned n, unsigned flags)
{
	int machine;
	unsigned abi;

	switch (flags & TK_KEV_DECODE_LINUX_MASK) {
	case TK_KEV_DECODE_LINUX_X86_64:
		machine = MACH_86_64;
		abi = 0;
		break;
	case TK_KEV_DECODE_LINUX_AARCH64:
		machine = MACH_AARCH64;
		abi = 1;
		break;
	case TK_KEV_DECODE_LINUX_I386:
		machine = MACH_X86;
		abi = 2;
		break;
	default:
		return NULL;
	}
	if (n >= SYSCALL_CACHE)
		return audit_syscall_to_name((int)n, machine);
	const char *name = atomic_load_explicit(&syscall_names[abi][n], memory_order_acquire);
	if (name == NULL) {
		name = audit_syscall_to_name((int)n, machine);
		if (name == NULL)
			name = no_name;
		atomic_store_explicit(&syscall_names[abi][n], name, memory_order_release);
	}
	return name == no_name ? NULL : name;
}

unsigned tk_kev_kercalls_flags(const char *abi, size_t len)
{
	static const struct {
		const char *name;
		unsigned flag;
	} abis[] = {
		{ "linux-x86_64", TK_KEV_DECODE_LINUX_X86_64 },
		{ "linux-aarch64", TK_KEV_DECODE_LINUX_AARCH64 },
		{ "linux-i386", TK_KEV_DECODE_LINUX_I386 },
	};
	size_t i;

	if (abi == NULL)
		return 0;
	for (i = 0; i < sizeof(abis) / sizeof(abis[0]); i++)
		if (strlen(abis[i].name) == len && memcmp(abis[i].name, abi, len) == 0)
			return abis[i].flag;
	return 0;
}
