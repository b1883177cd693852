/* The hello job: greets on stdout and writes /outputs/hello.txt.
 * Built static so the image can be `FROM scratch`: no base image, no registry. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
	const char *lease = getenv("STINT_LEASE");
	printf("hello from lease %s\n", lease ? lease : "(none)");
	FILE *out = fopen("/outputs/hello.txt", "w");
	if (!out) {
		perror("/outputs/hello.txt");
		return 1;
	}
	fprintf(out, "hello, world\n");
	fclose(out);
	return 0;
}
