import CellpathCore
import CommandLineKit
import ModemDiscovery
import SystemSupport

/// `cellpath completion bash|zsh|fish`: the shell's completion script. The scripts hold no
/// command names: on each Tab they ask `cellpath __complete`, which reads the command tree (so
/// they never fall behind it) and this machine's modems and interfaces.
package enum CompletionCommand {
    /// The shells a script is written for.
    package enum Shell: String, Sendable, CaseIterable {
        case bash, zsh, fish
    }

    package static let spec = CommandSpec(
        name: "completion",
        abstract: "Print the shell completion script for bash, zsh or fish.",
        discussion: """
            The script completes commands, options, option values (choices, files, modem indices, \
            interface names) by asking cellpath itself, so it stays true after an upgrade. \
            `make install` installs it for each shell.
            """,
        options: Options.self,
        placement: .program(.front),
        examples: [
            .init("Complete cellpath in this bash session:", #"eval "$(cellpath completion bash)""#),
            .init("Install the fish completion for your user:", "cellpath completion fish > cellpath.fish"),
            .init("Install the zsh completion (a directory in $fpath):", "cellpath completion zsh > _cellpath")
        ])

    /// `completion`'s argument.
    package struct Options: CommandOptions {
        @Argument(
            "shell", help: "bash, zsh or fish.",
            completion: .choices(Shell.allCases.map(\.rawValue))) package var shell: String

        package init() {}
    }

    package static func run(_ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        guard let shell = Shell(rawValue: options.shell) else {
            throw UsageError(
                "unknown shell '\(options.shell)': expected bash, zsh or fish", command: context.command)
        }
        Terminal.writeOut(script(for: shell))
        return CommandOutcome()
    }

    /// The script for `shell`.
    package static func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bashScript
        case .zsh: zshScript
        case .fish: fishScript
        }
    }

    /// The words on the line up to the cursor (bash splits `--opt=value` at `=`, so the line is
    /// split on blanks instead); a candidate's description is dropped.
    private static let bashScript = #"""
        # bash completion for cellpath (cellpath completion bash)
        _cellpath() {
            local line=${COMP_LINE:0:COMP_POINT} candidate directive=none
            local -a words candidates=()
            read -r -a words <<< "$line"
            [[ $line == *[[:blank:]] ]] && words+=("")
            ((${#words[@]} == 1)) && words+=("")
            while IFS= read -r candidate; do
                case $candidate in
                    :files) directive=files ;;
                    *) candidates+=("${candidate%%$'\t'*}") ;;
                esac
            done < <("${words[0]}" __complete -- "${words[@]:1}" 2>/dev/null)
            # bash completes only the part after a `=` of COMP_WORDBREAKS (`--color=al`).
            [[ ${words[-1]} == *=* && $COMP_WORDBREAKS == *=* ]] && candidates=("${candidates[@]#*=}")
            COMPREPLY=("${candidates[@]}")
            if [[ $directive == files ]]; then
                local IFS=$'\n'
                COMPREPLY+=($(compgen -f -- "${words[-1]}"))
                compopt -o filenames 2>/dev/null
            fi
        }
        complete -F _cellpath cellpath

        """#

    private static let zshScript = #"""
        #compdef cellpath
        # zsh completion for cellpath (cellpath completion zsh)
        _cellpath() {
            local line directive=none
            local -a candidates descriptions
            for line in "${(@f)$("${words[1]}" __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}"; do
                case $line in
                    :files) directive=files ;;
                    '') ;;
                    *)
                        candidates+=("${line%%$'\t'*}")
                        if [[ $line == *$'\t'* ]]; then
                            descriptions+=("${line%%$'\t'*} -- ${line#*$'\t'}")
                        else
                            descriptions+=("${line}")
                        fi
                        ;;
                esac
            done
            (( ${#candidates} )) && compadd -l -d descriptions -- "${candidates[@]}"
            [[ $directive == files ]] && _files
            return 0
        }
        if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
            _cellpath "$@"
        else
            compdef _cellpath cellpath
        fi

        """#

    private static let fishScript = #"""
        # fish completion for cellpath (cellpath completion fish)
        function __cellpath_complete
            set -l words (commandline -opc) (commandline -ct)
            for line in ($words[1] __complete -- $words[2..-1] 2>/dev/null)
                switch $line
                    case :files
                        __fish_complete_path (commandline -ct)
                    case '*'
                        echo $line
                end
            end
        end
        complete -c cellpath -f -a '(__cellpath_complete)'

        """#
}

/// `cellpath __complete -- WORD…` (hidden): the candidates for the last word, one a line, as
/// the completion scripts read them (`ShellCompletion.Answer.lines`).
package enum CompleteWordsCommand {
    package static let spec = CommandSpec(
        name: "__complete",
        abstract: "Print the completions of a command line's last word (for the completion scripts).",
        options: Options.self,
        hidden: true,
        placement: .program(.front))

    /// `__complete`'s words.
    package struct Options: CommandOptions {
        @VariadicArgument("words", help: "The command line after `cellpath`, up to the cursor.", optional: true)
        package var words: [String]

        package init() {}
    }

    package static func run(_ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        let roots = DeviceRoots(environment: context.environment)
        let completion = ShellCompletion(
            root: CommandTree.root, globalOptions: GlobalOptions.Declarations().declarations.compactMap(\.optionSpec),
            machineValues: { kind in machineValues(kind, roots) })
        let lines = completion.complete(options.words.isEmpty ? [""] : options.words).lines
        Terminal.writeOut(lines.map { $0 + "\n" }.joined())
        return CommandOutcome()
    }

    /// The modems' indices (from sysfs, without opening a modem) or the network interfaces' names.
    static func machineValues(_ kind: ValueCompletion, _ roots: DeviceRoots) -> [String] {
        switch kind {
        case .modems: ModemDiscovery(roots: roots).modems().map { String($0.index) }
        case .interfaces: (FileSystem.entries(roots.sysfs + "/class/net") ?? []).sorted()
        case .none, .choices, .files: []
        }
    }
}
