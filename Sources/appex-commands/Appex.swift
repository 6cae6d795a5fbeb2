import AppexRun
import AppexVersion
import ArgumentParser

/// The command tree; `AppexMain` parses it and runs the chosen command.
struct Appex: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appex",
        abstract: "Install, validate, run, request and inspect Linux app extensions (.appex bundles).",
        discussion: "Exit status (every command; README.md has the same table):\n" + ExitStatus.table,
        version: AppexVersion.current,
        subcommands: [
            ValidateCommand.self,
            InfoCommand.self,
            PolicyCommand.self,
            ActivationCommand.self, ExtensionsForCommand.self,
            RunCommand.self,
            InstallCommand.self, ListCommand.self, EnableCommand.self, DisableCommand.self, UninstallCommand.self,
            RequestCommand.self,
            LintBinaryCommand.self,
            TestPolicyCommand.self,
            JetsamCommand.self, KillsCommand.self, LogsCommand.self, TopCommand.self,
            ProfileCommand.self, ReportCommand.self, TransfersCommand.self,
            DoctorCommand.self,
            ConformanceCommand.self,
        ]
    )
}
