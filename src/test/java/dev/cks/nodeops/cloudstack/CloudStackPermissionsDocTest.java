package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/**
 * The least-privilege list users give their role (docs/cloudstack-versions.md) is exactly the set of
 * commands the client can send: a command added to the code without the doc, or a doc entry the code
 * no longer uses, fails here.
 */
class CloudStackPermissionsDocTest {
    private static final Path DOC = Path.of("docs/cloudstack-versions.md");
    private static final Pattern TABLE_ROW = Pattern.compile("^\\| `(\\w+)` \\|", Pattern.MULTILINE);
    private static final Pattern CMK_LOOP = Pattern.compile("for api in ([^;]+);", Pattern.DOTALL);

    @Test
    void theDocumentedRoleIsExactlyWhatTheClientSends() throws IOException {
        String doc = Files.readString(DOC);
        String permissions = doc.substring(doc.indexOf("## The API key's permissions"));

        Set<String> table = TABLE_ROW.matcher(permissions).results().map(m -> m.group(1)).collect(Collectors.toSet());
        Matcher loop = CMK_LOOP.matcher(permissions);
        assertThat(loop.find()).as("the cmk example in %s", DOC).isTrue();
        Set<String> example = Arrays.stream(loop.group(1).replace("\\", " ").trim().split("\\s+")).collect(Collectors.toSet());
        Set<String> sent = Arrays.stream(CloudStackCommand.values()).map(CloudStackCommand::apiName).collect(Collectors.toSet());

        assertThat(table).as("the permission table in %s", DOC).isEqualTo(sent);
        assertThat(example).as("the cmk example in %s", DOC).isEqualTo(sent);
    }
}
