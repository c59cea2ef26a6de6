# kstub.bash - bash completion for kstub: the subcommands (check, diff, cache, trace, version),
# every option, .cu files for inputs, directories for -T, -p, -I and
# --cuda-path, the targets for --target (kstub's own: c, python), image files for --embed, manifests for diff, traces for trace. Installed as
# PREFIX/share/bash-completion/completions/kstub (loaded on demand by
# bash-completion); or source it from ~/.bashrc. Needs nothing but bash.

_kstub__files()   # $1: extended glob of the file names to offer, e.g. '*.cu'
{
    local IFS=$'\n' extglob
    extglob=$(shopt -p extglob)
    shopt -s extglob
    compopt -o filenames 2>/dev/null
    if [[ $1 == "*" ]]; then
        COMPREPLY+=($(compgen -f -- "$cur"))
    else
        # Directories too, to walk into.
        COMPREPLY+=($(compgen -d -- "$cur"))
        COMPREPLY+=($(compgen -f -X "!$1" -- "$cur"))
    fi
    eval "$extglob"
}

_kstub()
{
    local cur prev sub="" i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            check | diff | cache | trace | version) sub=${COMP_WORDS[i]}; break ;;
            -*) ;;
            *) break ;;
        esac
    done

    # --opt=value: bash splits at '=' (COMP_WORDBREAKS), giving --opt, =, value.
    local opt=""
    if [[ $cur == "=" ]]; then
        opt=$prev; cur=""
    elif [[ $prev == "=" && COMP_CWORD -ge 2 ]]; then
        opt=${COMP_WORDS[COMP_CWORD-2]}
    elif [[ $cur == -*=* ]]; then
        # '=' not a word break here: complete the value after it.
        opt=${cur%%=*}; cur=${cur#*=}
        case $opt in
            --format) COMPREPLY=($(compgen -P "$opt=" -W "text json github" -- "$cur")) ;;
            --target) COMPREPLY=($(compgen -P "$opt=" -W "c python" -- "$cur")) ;;
            -std) COMPREPLY=($(compgen -P "$opt=" -W "c++11 c++14 c++17 c++20 c++23" -- "$cur")) ;;
        esac
        return 0
    fi
    case $opt in
        --format) COMPREPLY=($(compgen -W "text json github" -- "$cur")); return 0 ;;
        --target) COMPREPLY=($(compgen -W "c python" -- "$cur")); return 0 ;;
        -std) COMPREPLY=($(compgen -W "c++11 c++14 c++17 c++20 c++23" -- "$cur")); return 0 ;;
    esac

    case $prev in
        -T | -p | -I | --cuda-path | --cache-dir)
            local IFS=$'\n'
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return 0 ;;
        --embed)         _kstub__files '*.@(fatbin|cubin|ptx)'; return 0 ;;
        --manifest)      _kstub__files '*.json'; return 0 ;;
        --source)        _kstub__files '*.@(cu|cuh)'; return 0 ;;
        -o | -MF)        _kstub__files '*'; return 0 ;;
        --arch)          COMPREPLY=($(compgen -W "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120" -- "$cur")); return 0 ;;
        --target)        COMPREPLY=($(compgen -W "c python" -- "$cur")); return 0 ;;
        --kernels-in)    COMPREPLY=($(compgen -W "project input" -- "$cur")); _kstub__files '*.@(cuh|h|hpp|hh|hxx)'; return 0 ;;
        -D | -U | -MT | -MQ) return 0 ;;
    esac

    if [[ $cur == -* ]]; then
        local opts
        if [[ $sub == diff ]]; then
            opts="--format= --source --help"
        elif [[ $sub == trace ]]; then
            opts="--help"
        elif [[ $sub == cache ]]; then
            opts="--stats --prune --clear --max-size --cache-dir --help"
        else
            # kstub --help's options (generator/cli/optable.c); check's are
            # kstub check --help's: no --list, --all; --fix-command.
            opts="-o --manifest --embed --embed-source --skip-bodies --body-errors --cache-dir --no-cache --kernels-in --rdc -I -D -U -std= --cuda-path
                  --arch -p -T --target -MD -MMD -MF -MT -MQ -MP --help --version --format="
            if [[ $sub == check ]]; then
                opts+=" --fix-command"
            else
                opts+=" --list --all"
            fi
        fi
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        # No space after an option that takes its value after '='.
        [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
        return 0
    fi

    if [[ -z $sub && COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "check diff cache trace version" -- "$cur"))
    fi
    if [[ $sub == cache || $sub == version ]]; then
        return 0
    elif [[ $sub == diff ]]; then
        _kstub__files '*.json'
    elif [[ $sub == trace ]]; then
        _kstub__files '*.kstrace'
    else
        _kstub__files '*.@(cu|cuh)'
    fi
    return 0
}

complete -F _kstub kstub
