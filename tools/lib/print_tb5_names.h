/* SPDX-License-Identifier: MIT */
/*
 * print_tb5_names.h: names of the TBRW constants print_tb5 shows beside a member's value
 * (included once, by tools/lib/tb5_print.c, which defines struct name, N() and LOOKUP()).
 */

static const struct name stream_types[] = {
	N(TBRW_SAMPLING_STREAM), N(TBRW_AGGREGATED_STREAM), N(TBRW_BOOKMARK_STREAM),
	N(TBRW_BIND_DATA_INFORMATION_STREAM), N(TBRW_BIND_MODULE_INFORMATION_STREAM),
	N(TBRW_BIND_PID_INFORMATION_STREAM), N(TBRW_BIND_TID_INFORMATION_STREAM), N(TBRW_CUSTOM_STREAM),
};

static const struct name os_families[] = {
	N(TBRW_OSFAMILY_WIN32), N(TBRW_OSFAMILY_WIN64), N(TBRW_OSFAMILY_Wince), N(TBRW_OSFAMILY_XOS),
	N(TBRW_OSFAMILY_LINUX32), N(TBRW_OSFAMILY_LINUX64),
};

static const struct name desc_types[] = {
	N(ST_NONE), N(ST_LEGACY_SAMPLE_RECORD), N(ST_IP), N(ST_PID), N(ST_TID), N(ST_PROCESSOR_NUMBER),
	N(ST_PROCESSOR_STATUS), N(ST_TIME_STAMP), N(ST_POWER), N(ST_INTERRUPT_FAULT_ADDR), N(ST_IEAR),
	N(ST_DEAR), N(ST_BRANCH_TRACE), N(ST_INST_TRACE), N(ST_PMD), N(ST_IEAR_PHYSICAL), N(ST_DEAR_PHYSICAL),
	N(ST_BRANCH_TRACE_PHYSICAL), N(ST_INST_TRACE_PHYSICAL), N(ST_PMD_PHYSICAL), N(ST_LEGACY_UNKNOWN),
	N(ST_PROCESS), N(ST_PROCESS_PATH), N(ST_THREAD), N(ST_MODULE_SEGMENT_NAME), N(ST_SEG_NUM),
	N(ST_SEG_OFFSET), N(ST_SEG_TYPE), N(ST_MODULE_LOAD_ADDRESS), N(ST_MODULE), N(ST_MODULE_PATH),
	N(ST_EVENT_ID), N(ST_EVENT), N(ST_HARDWARE_THREAD), N(ST_CORE), N(ST_PACKAGE), N(ST_SAMPLES),
	N(ST_EVENT_COUNTS), N(ST_FUNCTION), N(ST_FUNCTION_FULL_NAME), N(ST_CLASS), N(ST_FN_SIZE), N(ST_RVA),
	N(ST_FN_SEG_OFFSET), N(ST_FN_RVA), N(ST_WALL_CLOCK), N(ST_FNID_SUM), N(ST_FNID_AVG), N(ST_FNID_MIN),
	N(ST_FNID_MAX), N(ST_PROCESS_IDX), N(ST_THREAD_IDX), N(ST_MODULE_IDX), N(ST_EVENT_IDX),
	N(ST_SAMPLE_IDX), N(ST_PERCENTAGE_TOTAL), N(ST_PERCENTAGE_SEL), N(ST_MODULE_IDX_FOR_PROCESS_NAME),
	N(ST_ANNOTATION),
};

static const struct name desc_subtypes[] = {
	N(SST_NONE), N(SST_BLANK_SPACE), N(SST_TS_MILLISECONDS), N(SST_TS_CPU_CYCLES), N(SST_TS_FSB_CYCLES),
	N(SST_TS_OTHER), N(SST_TS_SAMPLE_COUNT), N(SST_TS_NANOSECONDS), N(SST_LBR_TOS), N(SST_LBR_FROM),
	N(SST_LBR_TO), N(SST_LBR_FROM_TO), N(SST_LBR_OTHER), N(SST_IEAR_CONFIG), N(SST_IEAR_INST_ADDR),
	N(SST_IEAR_LATENCY), N(SST_DEAR_CONFIG), N(SST_DEAR_INST_ADDR), N(SST_DEAR_LATENCY),
	N(SST_DEAR_DATA_ADDR), N(SST_BTBT_CONFIG), N(SST_BTBT_INDEX), N(SST_BTBT_EXTENSION), N(SST_BTBT_DATA),
	N(SST_IPEAR_CONFIG), N(SST_IPEAR_INDEX), N(SST_IPEAR_EXTENSION), N(SST_IPEAR_DATA), N(SST_IIP),
	N(SST_IPSR), N(SST_EIP), N(SST_EFLAGS), N(SST_TSC), N(SST_ITC), N(SST_PSTATE), N(SST_IA32_PERF_STATUS),
	N(SST_IFA),
};

static const struct name module_flags[] = {
	N(TBRW_MODULE_LOADED), N(TBRW_MODULE_UNLOADED), N(TBRW_MODULE_TSC_USED), N(TBRW_MODULE_IS_EXE),
	N(TBRW_MODULE_GLOBAL_LOAD), N(TBRW_MODULE_1ST_MODULE_REC_IN_PROCESS),
};

static const struct name arch_types[] = {
	N(TBRW_GST_UNKNOWN), N(TBRW_GST_X86), N(TBRW_GST_ITANIUM), N(TBRW_GST_SA), N(TBRW_GST_XSC),
	N(TBRW_GST_EM64T), N(TBRW_GST_CS860),
};

static const struct name cpu_archs[] = {
	N(CPU_ARCHITECTURE_UNKNOWN), N(CPU_ARCHITECTURE_IA32), N(CPU_ARCHITECTURE_IA64), N(CPU_ARCHITECTURE_INTEL64),
};

static const struct name access_methods[] = {
	N(TBRW_MSR), N(TBRW_PCI), N(TBRW_MEMORY), N(TBRW_OTHER_ACCESS),
};

static const struct name event_flags[] = {
	N(TBRW_EVENT_EBS), N(TBRW_EVENT_TBS),
};

static const struct name pid_flags[] = {
	N(TBRW_PID_CREATED), N(TBRW_PID_TERMINATED), N(TBRW_PID_TSC_USED), N(TBRW_PID_DERIVED),
};

static const struct name tid_flags[] = {
	N(TBRW_TID_CREATED), N(TBRW_TID_TERMINATED), N(TBRW_TID_TSC_USED), N(TBRW_TID_DERIVED),
};

static const struct name segment_modes[] = {
	N(TBRW_MODE_32BIT), N(TBRW_MODE_64BIT),
};

/* The name of v for a member with enumerated values, or NULL. */
static const char *tb5_value_name(const char *field, uint64_t v)
{
	if (strcmp(field, "stream_type") == 0)
		return LOOKUP(stream_types, v);
	if (strcmp(field, "os_platform") == 0)
		return LOOKUP(os_families, v);
	if (strcmp(field, "desc_type") == 0) {
		if (v >= 0x4000 && v <= 0x7fff)
			return "user-defined";
		if (v >= 0x8000)
			return "reserved";
		return LOOKUP(desc_types, v);
	}
	if (strcmp(field, "desc_subtype") == 0)
		return LOOKUP(desc_subtypes, v);
	if (strcmp(field, "module_segment_type") == 0)
		return LOOKUP(segment_modes, v);
	if (strcmp(field, "arch_type") == 0)
		return LOOKUP(arch_types, v);
	if (strcmp(field, "cpu_native_arch_type") == 0)
		return LOOKUP(cpu_archs, v);
	if (strcmp(field, "detail_method") == 0)
		return LOOKUP(access_methods, v);
	return NULL;
}

/* Writes "A|B|0x..." for a flags member into buf; returns 0 when field has no flags or v is 0. */
static int tb5_flag_names(const char *field, uint64_t v, char *buf, size_t size)
{
	const struct name *names;
	size_t n, i, len = 0;
	uint64_t rest = v;

	if (strcmp(field, "module_flags") == 0) {
		names = module_flags;
		n = sizeof(module_flags) / sizeof(module_flags[0]);
	} else if (strcmp(field, "event_flags") == 0) {
		names = event_flags;
		n = sizeof(event_flags) / sizeof(event_flags[0]);
	} else if (strcmp(field, "pid_flags") == 0) {
		names = pid_flags;
		n = sizeof(pid_flags) / sizeof(pid_flags[0]);
	} else if (strcmp(field, "tid_flags") == 0) {
		names = tid_flags;
		n = sizeof(tid_flags) / sizeof(tid_flags[0]);
	} else {
		return 0;
	}
	if (v == 0)
		return 0;
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (names[i].value != 0 && (v & names[i].value) == names[i].value) {
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? "|" : "", names[i].name);
			rest &= ~names[i].value;
		}
	}
	if (rest != 0)
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s0x%" PRIx64, len ? "|" : "", rest);
	return len > 0 && len < size;
}
