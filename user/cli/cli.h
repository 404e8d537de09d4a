/* SPDX-License-Identifier: GPL-2.0 */
/* What the command's files share. */
#ifndef TS_CLI_H
#define TS_CLI_H

#define EXIT_USAGE 2

/* One line on stderr, "truestat: @msg", and exit @code. */
void ts_cli_die(int code, const char *msg);

#endif
