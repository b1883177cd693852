/* A job for the worker's tests, built static and shipped `FROM scratch`: each pair of arguments
 * is one step, run in order.
 *   write NAME TEXT   write TEXT to /outputs/NAME (and say so on stdout)
 *   say TEXT          print TEXT on stdout and stderr
 *   lines N           print 0, 1, … N-1 on stdout, one a line, many lines a write
 *   big BYTES         write BYTES bytes to /outputs/big, a MiB at a time
 *   big-at NAME BYTES the same to /outputs/NAME
 *   falloc BYTES      take BYTES of disk for /outputs/falloc at once (fallocate), as a buyer
 *                     filling the provider's disk would; print its result ("falloc 0" or errno)
 *   hold BYTES        write BYTES bytes to /outputs/held, deleted first and kept open: no walk of
 *                     /outputs sees it, the disk does
 *   mkdir NAME MODE   make the folder /outputs/NAME with MODE (octal, umask aside)
 *   reclose NAME      start a child that sets /outputs/NAME to 0700 every millisecond
 *   sleep SECONDS     sleep
 *   net -             try to reach 1.1.1.1:53; exit 42 if it worked
 *   rootfs -          try to write /etc/stint; exit 43 if it worked
 *   copy N            copy /inputs/N to /outputs/copy-N
 *   env NAME          print NAME=value of an environment variable
 *   whoami -          print uid=U gid=G, the user it runs as
 *   read PATH         try to open PATH for reading; print "read PATH: ok" or why not
 *   cpus -            print cpus=LIST, the CPUs it may run on (as 0,2,3)
 *   detach SECONDS    start a child in a session of its own that sleeps SECONDS (its pid in
 *                     /outputs/detached)
 *   onterm CODE       from now on, end with CODE on SIGTERM
 *   exit CODE         exit with CODE
 * Outputs go to $STINT_OUTPUTS and inputs come from $STINT_INPUTS (a container's /outputs and
 * /inputs; the native executor's folders).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int term_code;
static void on_term(int signal) {
	(void)signal;
	_exit(term_code);
}

static void write_file(const char *path, const char *text, size_t len) {
	FILE *f = fopen(path, "wb");
	if (!f) { perror(path); exit(50); }
	fwrite(text, 1, len, f);
	fclose(f);
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	const char *outputs = getenv("STINT_OUTPUTS") ? getenv("STINT_OUTPUTS") : "/outputs";
	const char *inputs = getenv("STINT_INPUTS") ? getenv("STINT_INPUTS") : "/inputs";
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *step = argv[i], *arg = argv[i + 1];
		char path[512];
		if (!strcmp(step, "write")) {
			if (i + 2 >= argc) return 51;
			snprintf(path, sizeof path, "%s/%s", outputs, arg);
			write_file(path, argv[i + 2], strlen(argv[i + 2]));
			printf("wrote %s\n", arg);
			i++;
		} else if (!strcmp(step, "say")) {
			printf("%s\n", arg);
			fprintf(stderr, "%s\n", arg);
		} else if (!strcmp(step, "lines")) {
			static char chunk[1 << 16];
			size_t used = 0;
			for (long n = 0, last = atol(arg); n < last; n++) {
				used += (size_t)snprintf(chunk + used, 32, "%ld\n", n);
				if (used > sizeof chunk - 32 || n + 1 == last) {
					if (write(1, chunk, used) != (ssize_t)used) return 55;
					used = 0;
				}
			}
		} else if (!strcmp(step, "big") || !strcmp(step, "big-at")) {
			/* big BYTES: to outputs/big; big-at NAME BYTES: to outputs/NAME. */
			const char *name = "big";
			if (!strcmp(step, "big-at")) {
				if (i + 2 >= argc) return 51;
				name = arg;
				arg = argv[++i + 1];
			}
			long long left = atoll(arg);
			static char mib[1 << 20];
			memset(mib, 'x', sizeof mib);
			snprintf(path, sizeof path, "%s/%s", outputs, name);
			FILE *f = fopen(path, "wb");
			if (!f) return 52;
			while (left > 0) {
				size_t n = left < (long long)sizeof mib ? (size_t)left : sizeof mib;
				fwrite(mib, 1, n, f);
				fflush(f);
				left -= n;
				usleep(20000);
			}
			fclose(f);
		} else if (!strcmp(step, "falloc")) {
			snprintf(path, sizeof path, "%s/falloc", outputs);
			int fd = open(path, O_CREAT | O_WRONLY, 0644);
			if (fd < 0) return 52;
			int rc = fallocate(fd, 0, 0, (off_t)atoll(arg)) ? errno : 0;
			printf("falloc %d\n", rc);
			close(fd);
		} else if (!strcmp(step, "hold")) {
			static char mib[1 << 20];
			memset(mib, 'h', sizeof mib);
			snprintf(path, sizeof path, "%s/held", outputs);
			int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
			if (fd < 0 || unlink(path) != 0) return 57;
			for (long long left = atoll(arg); left > 0;) {
				size_t n = left < (long long)sizeof mib ? (size_t)left : sizeof mib;
				if (write(fd, mib, n) != (ssize_t)n) return 58;
				left -= n;
				usleep(20000);
			}
			printf("holding %s bytes nobody sees\n", arg);
		} else if (!strcmp(step, "mkdir")) {
			if (i + 2 >= argc) return 51;
			snprintf(path, sizeof path, "%s/%s", outputs, arg);
			mode_t mode = (mode_t)strtol(argv[++i + 1], NULL, 8);
			if (mkdir(path, mode) != 0 || chmod(path, mode) != 0) return 59;
		} else if (!strcmp(step, "reclose")) {
			snprintf(path, sizeof path, "%s/%s", outputs, arg);
			pid_t child = fork();
			if (child < 0) return 54;
			if (child == 0) {
				for (;;) {
					chmod(path, 0700);
					usleep(1000);
				}
			}
		} else if (!strcmp(step, "sleep")) {
			sleep(atoi(arg));
		} else if (!strcmp(step, "net")) {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(53) };
			inet_pton(AF_INET, "1.1.1.1", &to.sin_addr);
			if (s >= 0 && connect(s, (struct sockaddr *)&to, sizeof to) == 0) return 42;
			printf("no network\n");
		} else if (!strcmp(step, "rootfs")) {
			int fd = open("/etc/stint", O_CREAT | O_WRONLY, 0644);
			if (fd >= 0) return 43;
			printf("read-only root\n");
		} else if (!strcmp(step, "copy")) {
			char from[512], buf[65536];
			snprintf(from, sizeof from, "%s/%s", inputs, arg);
			snprintf(path, sizeof path, "%s/copy-%s", outputs, arg);
			FILE *in = fopen(from, "rb"), *out = fopen(path, "wb");
			if (!in || !out) return 53;
			size_t n;
			while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
			fclose(in);
			fclose(out);
		} else if (!strcmp(step, "env")) {
			printf("%s=%s\n", arg, getenv(arg) ? getenv(arg) : "");
		} else if (!strcmp(step, "read")) {
			int fd = open(arg, O_RDONLY);
			printf("read %s: %s\n", arg, fd >= 0 ? "ok" : strerror(errno));
			if (fd >= 0) close(fd);
		} else if (!strcmp(step, "whoami")) {
			printf("uid=%d gid=%d\n", (int)getuid(), (int)getgid());
		} else if (!strcmp(step, "cpus")) {
			cpu_set_t set;
			if (sched_getaffinity(0, sizeof set, &set) != 0) return 56;
			printf("cpus=");
			for (int cpu = 0, first = 1; cpu < CPU_SETSIZE; cpu++) {
				if (!CPU_ISSET(cpu, &set)) continue;
				printf(first ? "%d" : ",%d", cpu);
				first = 0;
			}
			printf("\n");
		} else if (!strcmp(step, "detach")) {
			pid_t child = fork();
			if (child < 0) return 54;
			if (child == 0) {
				setsid();
				sleep(atoi(arg));
				_exit(0);
			}
			char text[32];
			int n = snprintf(text, sizeof text, "%d", (int)child);
			snprintf(path, sizeof path, "%s/detached", outputs);
			write_file(path, text, (size_t)n);
		} else if (!strcmp(step, "onterm")) {
			term_code = atoi(arg);
			signal(SIGTERM, on_term);
		} else if (!strcmp(step, "exit")) {
			return atoi(arg);
		}
	}
	return 0;
}
