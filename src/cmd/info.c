/* info.c - stax info. */
#include "cmd/cmd.h"

#include <stdio.h>

static const struct opt info_opts[] = {
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_info_spec = {
	"info",
"usage: stax info [FILE | -i FILE] [--json] [--pid PID] [--tid TID] [--comm NAME]\n"
"\n"
"What was recorded: the stax that wrote it (written by:), command, duration,\n"
"event with requested and effective rate (the kernel lowers it when it\n"
"throttles, and lost samples lower it: samples per second of the CPU time\n"
"the recorded processes used; with -a, samples per second of the\n"
"recording per recorded CPU, as perf's -F means it there, since every\n"
"CPU is sampled all the time, idle ones too), samples, lost records,\n"
"throttling, the lost records by cause\n"
"(lost:): the kernel's rings full, samples the kernel dropped, samples stax\n"
"dropped when its queue was full; the samples whose stack copy the recorder\n"
"shortened because unwinding fell behind (degraded:), the recorder's ring\n"
"size per cpu (rings:), the processes\n"
"and threads whose lost records it read from /proc and those that had\n"
"exited first (recovered:), the samples of tasks the kernel had already\n"
"released when it sampled them, at the end of an exit, named [exited]\n"
"(exited:, when any), how good the stacks are (how many reach main or a thread\n"
"start function; verdicts and unwinding methods; samples unwound through\n"
"JIT code by the CPython trampoline rule, frame pointers or jitdump CFI;\n"
"read: samples whose frames beyond a stack switch were read from the live\n"
"process), where stacks stop and why (the stack copy ended, a stack switch\n"
"not followed, a return address outside executable code, a loop, ...),\n"
"and each module with its frames, the share without symbols, and where\n"
"its symbols and source lines came from (symtab, debug-file, debuglink,\n"
"minidebuginfo, debuginfod, dynsym; jit; kallsyms). It counts every\n"
"process sampled. A stack that reaches main or a thread start function\n"
"is complete, whatever the unwinder said of the frames beyond it;\n"
"truncated and broken are stacks that stop short of one (or that a\n"
"damaged chunk cut). The file line says whether the recording is\n"
"finished, still being recorded or truncated; a damaged line counts the\n"
"chunks skipped as damaged. Without kernel frames it says why, from the\n"
"facts the recorder kept. Of a directory of recordings, or with --since or\n"
"--until, a window: line gives the window and a files: line each recording,\n"
"with its wall-clock span and what was read of it, or why not.\n"
"Reads FILE (or -i FILE; stax.data when neither is given); --json prints\n"
"JSON.\n",
	info_opts, NULL, 0,
};

int cmd_info(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, &cmd_info_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE)
		query_opt(&q, &op, id);
	query_load(&q, &p);
	view_info(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
