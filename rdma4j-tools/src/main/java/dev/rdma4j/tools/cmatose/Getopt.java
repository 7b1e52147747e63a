package dev.rdma4j.tools.cmatose;

import java.util.ArrayList;
import java.util.List;

/**
 * glibc's {@code getopt(3)} as a C tool calls it with a plain option string (no long options, no leading
 * {@code +}, {@code -} or {@code :}): options may be grouped ({@code -mc2}), an argument may follow its letter
 * ({@code -C10}) or come as the next word, even one starting with {@code -}; words that are not options are skipped
 * (GNU's permutation), {@code --} ends the options, and a lone {@code -} is not one. Stateless.
 */
final class Getopt {
    /**
     * One option as getopt returned it.
     *
     * @param letter   the option's letter
     * @param argument its argument, or {@code null} for an option without one
     */
    record Option(char letter, String argument) {
    }

    /**
     * The options up to the first bad one, and getopt's message for that one.
     *
     * @param options the options, in order
     * @param error   getopt's message for a bad option (without its newline), or {@code null} when all were good
     */
    record Result(List<Option> options, String error) {
    }

    private Getopt() {
    }

    /**
     * Parses {@code args} (without the program name).
     *
     * @param program   the program name getopt's messages start with ({@code argv[0]})
     * @param optstring the letters, each followed by {@code :} when it takes an argument
     * @param args      the arguments
     * @return the options and, if one was bad, getopt's message ({@code "invalid option -- 'x'"} or
     *         {@code "option requires an argument -- 'x'"})
     */
    static Result parse(String program, String optstring, List<String> args) {
        List<Option> options = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("--")) {
                break;
            }
            if (arg.length() < 2 || arg.charAt(0) != '-') {
                continue; // an operand: GNU getopt moves it to the end, and cmatose.c uses none
            }
            for (int j = 1; j < arg.length(); j++) {
                char c = arg.charAt(j);
                int at = c == ':' ? -1 : optstring.indexOf(c);
                if (at < 0) {
                    return new Result(options, program + ": invalid option -- '" + c + "'");
                }
                if (at + 1 < optstring.length() && optstring.charAt(at + 1) == ':') {
                    if (j + 1 < arg.length()) {
                        options.add(new Option(c, arg.substring(j + 1)));
                    } else if (i + 1 < args.size()) {
                        options.add(new Option(c, args.get(++i)));
                    } else {
                        return new Result(options, program + ": option requires an argument -- '" + c + "'");
                    }
                    break;
                }
                options.add(new Option(c, null));
            }
        }
        return new Result(options, null);
    }
}
