// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the exporter's request, address and "Authorization:
 * Basic" parsing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/httpd.h"
#include "exporter/webauth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage ss;
	const char *user, *password;
	char *copy, err[256], creds[512];
	socklen_t len;
	int status = 0;

	if (size > TS_HTTP_MAX_REQUEST)
		size = TS_HTTP_MAX_REQUEST; /* the server never reads more */
	ts_http_route((const char *)data, size, &status);
	if (!ts_http_basic_credentials((const char *)data, size, creds,
				       sizeof(creds), &user, &password) &&
	    (strlen(user) >= sizeof(creds) || password < creds ||
	     password >= creds + sizeof(creds)))
		abort();
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = 0;
	ts_http_parse_addr("--web.listen-address", copy, &ss, &len, err,
			   sizeof(err));
	free(copy);
	return 0;
}
