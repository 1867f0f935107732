/* CPU kernels of the control family (see cpu_kernels.h for the entry forms) */
KERNEL_FORKED("", "If", 1, 25, 0, KF_DYNAMIC_OUTPUT, cpu_if_prepare, cpu_if_run, cpu_if_release,
              cpu_if_fork, cpu_if_unfork)
KERNEL_FORKED("", "Loop", 1, 25, 0, KF_DYNAMIC_OUTPUT, cpu_loop_prepare, cpu_loop_run, cpu_loop_release,
              cpu_loop_fork, cpu_loop_unfork)
KERNEL_FORKED("", "Scan", 8, 25, 0, KF_DYNAMIC_OUTPUT, cpu_scan_prepare, cpu_scan_run, cpu_scan_release,
              cpu_scan_fork, cpu_scan_unfork)
KERNEL_FORKED("", "SequenceMap", 17, 17, 0, KF_DYNAMIC_OUTPUT, cpu_sequence_map_prepare, cpu_sequence_map_run, cpu_sequence_map_release,
              cpu_sequence_map_fork, cpu_sequence_map_unfork)
KERNEL("", "SequenceEmpty", 11, 11, 0, KF_DYNAMIC_OUTPUT, cpu_sequence_empty_run)
KERNEL("", "SequenceConstruct", 11, 11, 0, KF_DYNAMIC_OUTPUT, cpu_sequence_construct_run)
KERNEL("", "SequenceInsert", 11, 11, 0, KF_DYNAMIC_OUTPUT, cpu_sequence_insert_run)
KERNEL("", "SequenceErase", 11, 11, 0, KF_DYNAMIC_OUTPUT, cpu_sequence_erase_run)
KERNEL("", "SequenceAt", 11, 11, 0, KF_DYNAMIC_OUTPUT, cpu_sequence_at_run)
KERNEL("", "SequenceLength", 11, 11, 0, KF_DYNAMIC_OUTPUT, cpu_sequence_length_run)
KERNEL("", "SplitToSequence", 11, 24, 0, KF_DYNAMIC_OUTPUT, cpu_split_to_sequence_run)
KERNEL("", "ConcatFromSequence", 11, 11, 0, KF_DYNAMIC_OUTPUT, cpu_concat_from_sequence_run)
KERNEL("", "Optional", 15, 28, 0, KF_DYNAMIC_OUTPUT, cpu_optional_run)
KERNEL("", "OptionalHasElement", 15, 28, 0, KF_DYNAMIC_OUTPUT, cpu_optional_has_element_run)
KERNEL("", "OptionalGetElement", 15, 28, 0, KF_DYNAMIC_OUTPUT, cpu_optional_get_element_run)
