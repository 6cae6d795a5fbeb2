import AppexPolicy

/// JSON renderings of policies, shared by `appex info` and `appex policy show`.
extension ExtensionPointPolicy {
    var jsonObject: [String: Any] {
        [
            "extensionPoints": extensionPoints,
            "title": title,
            "memory": [
                "activeHardLimitBytes": memory.activeHardLimit.bytes,
                "activeSoftLimitBytes": memory.activeSoftLimit.bytes,
                "inactiveHardLimitBytes": memory.inactiveHardLimit.bytes,
                "inactiveSoftLimitBytes": memory.inactiveSoftLimit.bytes,
                "pageCacheAllowanceBytes": memory.pageCacheAllowance.bytes,
                "source": memory.source,
            ] as [String: Any],
            "jetsamBand": ["name": jetsamBand.name, "value": jetsamBand.value] as [String: Any],
            "idleBand": ["name": idleBand.name, "value": idleBand.value] as [String: Any],
            "launchDeadlineMs": launchDeadline.milliseconds,
            "requestTimeoutMs": requestTimeout.milliseconds,
            "idleTimeoutMs": idleTimeout.milliseconds,
            "pingIntervalMs": pingInterval.milliseconds,
            "idlePingIntervalMs": idlePingInterval.milliseconds,
            "unresponsiveTimeoutMs": unresponsiveTimeout.milliseconds,
            "maxInstances": maxInstances,
            "pidsLimit": pidsLimit,
            "openFilesLimit": openFilesLimit,
            "grantableEntitlements": grantableEntitlements,
            "readOnlyPaths": readOnlyPaths,
            "network": network.rawValue,
            "deniedSyscallGroups": deniedSyscalls.map { denial -> [String: Any] in
                var d: [String: Any] = ["group": denial.group, "action": denial.action.name]
                if let e = denial.action.errnoValue { d["errno"] = ErrnoNames.name(e) ?? String(e) }
                return d
            },
            "files": files,
        ]
    }
}

extension EffectivePolicy {
    var jsonObject: [String: Any] {
        [
            "extensionPoint": extensionPoint,
            "usesDefaults": usesDefaults,
            "policy": policy.jsonObject,
            "grantedEntitlements": grantedEntitlements,
            "refusedEntitlements": refusedEntitlements,
            "appGroups": appGroups,
            "hostNetwork": hostNetwork,
            "cgroupMemoryMaxBytes": cgroupMemoryMax,
            "cgroupMemoryHighBytes": cgroupMemoryHigh,
            "syscalls": syscallRules.map { rule -> [String: Any] in
                var d: [String: Any] = ["name": rule.name, "action": rule.action.name, "group": rule.group]
                if let e = rule.action.errnoValue { d["errno"] = ErrnoNames.name(e) ?? String(e) }
                return d
            },
        ]
    }
}
